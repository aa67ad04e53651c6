// Package openapitest validates real answers of idforge's HTTP API
// against the OpenAPI document, api/openapi.json. It is a module of its
// own so that the OpenAPI library stays out of idforge's go.mod;
// scripts/test.sh runs it.
package openapitest
