// Command gencodes writes the error vocabulary into the OpenAPI document
// named by its argument (api/openapi.json, through "go generate ./api"):
// the schema ErrorCode (every idforge.Code, with its HTTP status, gRPC
// code and retryability) and one response ErrorNNN per HTTP status of the
// vocabulary, whose code is limited to the codes of that status. The
// document is rewritten with its keys sorted, two-space indented.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/idforge/idforge"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gencodes openapi.json")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out []byte
		if out, err = apply(in); err == nil {
			err = os.WriteFile(os.Args[1], out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencodes:", err)
		os.Exit(1)
	}
}

// apply returns doc with its error vocabulary generated from codes.go.
func apply(doc []byte) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("reading the document: %w", err)
	}
	comps, ok := d["components"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document has no components")
	}
	schemas, ok := comps["schemas"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document has no components.schemas")
	}
	schemas["ErrorCode"] = errorCodeSchema()
	comps["responses"] = errorResponses()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errorCodeSchema is the schema of error.code: every code, and a table of
// what each means for the caller.
func errorCodeSchema() map[string]any {
	var codes []any
	var table strings.Builder
	table.WriteString("The error code of every error answer; a wire contract that never changes. ")
	table.WriteString("Retryable: the same call may succeed on another node, or on this one a little later.\n\n")
	table.WriteString("| code | HTTP status | gRPC code | retryable |\n| --- | --- | --- | --- |\n")
	for _, c := range idforge.Codes() {
		codes = append(codes, string(c))
		fmt.Fprintf(&table, "| %s | %d | %s | %s |\n", c, c.HTTPStatus(), c.GRPCCode(), yesNo(c.Retryable()))
	}
	return map[string]any{"type": "string", "enum": codes, "description": table.String()}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// responseName is the name of the component response of an HTTP status.
func responseName(status int) string { return fmt.Sprintf("Error%d", status) }

// statusHeaders are the headers an error answer of a status carries.
var statusHeaders = map[int]map[string]any{
	http.StatusUnauthorized: {"WWW-Authenticate": map[string]any{
		"description": "Bearer realm=\"idforge\", with error=\"invalid_token\" for an unknown token.", "schema": map[string]any{"type": "string"}}},
	http.StatusMethodNotAllowed: {"Allow": map[string]any{
		"description": "The methods the path takes.", "schema": map[string]any{"type": "string"}}},
	http.StatusTooManyRequests: {"Retry-After": map[string]any{
		"description": "Seconds until the token's rate limit lets a call through.", "schema": map[string]any{"type": "integer", "minimum": 0}}},
}

// errorResponses are the responses ErrorNNN, one per status of the
// vocabulary.
func errorResponses() map[string]any {
	byStatus := map[int][]idforge.Code{}
	var statuses []int
	for _, c := range idforge.Codes() {
		s := c.HTTPStatus()
		if _, seen := byStatus[s]; !seen {
			statuses = append(statuses, s)
		}
		byStatus[s] = append(byStatus[s], c)
	}
	slices.Sort(statuses)
	out := map[string]any{}
	for _, s := range statuses {
		var enum []any
		var words []string
		for _, c := range byStatus[s] {
			enum = append(enum, string(c))
			w := string(c)
			if c.Retryable() {
				w += " (retryable)"
			}
			words = append(words, w)
		}
		resp := map[string]any{
			"description": fmt.Sprintf("%s: error code %s.", http.StatusText(s), strings.Join(words, ", ")),
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
				"allOf": []any{
					map[string]any{"$ref": "#/components/schemas/Error"},
					map[string]any{"properties": map[string]any{"error": map[string]any{
						"properties": map[string]any{"code": map[string]any{"enum": enum}}}}},
				}}}},
		}
		if h, ok := statusHeaders[s]; ok {
			resp["headers"] = h
		}
		out[responseName(s)] = resp
	}
	return out
}
