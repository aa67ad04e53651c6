package api_test

import (
	"testing"

	"github.com/idforge/idforge/internal/testsvc"
)

// TestOpenAPIModule validates real answers against openapi.json in the
// module api/openapitest, which keeps the OpenAPI validator out of
// idforge's go.mod (see testsvc.NestedModule).
func TestOpenAPIModule(t *testing.T) {
	// Without -race: the validator is not idforge's code, and building it
	// with the race detector takes minutes the check does not need.
	testsvc.NestedModule(t, "openapitest", "-race=false")
}
