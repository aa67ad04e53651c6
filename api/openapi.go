// Package api holds idforge's API descriptions: the gRPC service's
// protocol buffers (api/idforge/v1) and openapi.json, the OpenAPI 3.1
// document of the whole HTTP API, which server/httpapi serves at
// GET /openapi.json.
//
// The document's error vocabulary (the schema ErrorCode and the
// responses Error400 … Error503) is generated from idforge.Code's table
// in codes.go by "go generate ./api"; the rest is written by hand. Tests
// fail when the generated part is stale, when a route, a query parameter
// or an error status of the servers is missing from the document, and
// (in the module api/openapitest) when a real answer does not match it.
package api

import _ "embed"

//go:generate go run ./internal/gencodes openapi.json

//go:embed openapi.json
var openapi []byte

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API, as JSON. The
// slice is shared: callers must not modify it.
func OpenAPI() []byte { return openapi }
