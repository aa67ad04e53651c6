package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDocumentIsGenerated fails when api/openapi.json's error vocabulary
// differs from codes.go (or the file is not in the generator's layout):
// run "go generate ./api" and commit the result.
func TestDocumentIsGenerated(t *testing.T) {
	const path = "../../openapi.json"
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := apply(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, want) {
		t.Fatalf("api/openapi.json is stale: its error codes or layout differ from what codes.go generates; run go generate ./api and commit it")
	}
}
