package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/idforge/idforge/auth"
)

// nodeURL turns a node address as the commands take it ("host:port" or an
// http(s) URL with an optional path prefix) into the URL API paths are
// appended to.
func nodeURL(addr string, useTLS bool) string {
	if !strings.Contains(addr, "://") {
		scheme := "http://"
		if useTLS {
			scheme = "https://"
		}
		addr = scheme + addr
	}
	return strings.TrimRight(addr, "/")
}

// getJSON asks a node's HTTP API for path (with token, when set) and
// decodes the answer into out. It returns the answer's Date header and
// when the request was sent and answered, for clock comparisons.
func getJSON(ctx context.Context, base, path, token string, out any) (answered http.Header, sent, received time.Time, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, sent, received, err
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	sent = time.Now()
	resp, err := http.DefaultClient.Do(req)
	received = time.Now()
	if err != nil {
		return nil, sent, received, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, sent, received, err
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return resp.Header, sent, received, fmt.Errorf("GET %s: %s: %s", base+path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return resp.Header, sent, received, fmt.Errorf("GET %s: %w", base+path, err)
	}
	return resp.Header, sent, received, nil
}

// tokenFrom is the token a client command sends: the flag's value, else
// IDFORGE_TOKEN, else IDFORGE_ISSUE_TOKEN (the variables a server reads
// its tokens from, so a command run beside it needs no flag).
func tokenFrom(flagValue string, getenv func(string) string) string {
	for _, t := range []string{flagValue, getenv(auth.EnvToken), getenv(auth.EnvIssueToken)} {
		if t != "" {
			return t
		}
	}
	return ""
}
