package api_test

import (
	"testing"

	"github.com/idforge/idforge/internal/testsvc"
)

// TestOpenAPIModule validates real answers against openapi.json in the
// module api/openapitest, which keeps the OpenAPI validator out of
// idforge's go.mod (see testsvc.NestedModule).
func TestOpenAPIModule(t *testing.T) { testsvc.NestedModule(t, "openapitest") }
