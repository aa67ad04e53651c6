package httpapi

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/idforge/idforge/internal/httpwire"
)

// form=ranges answers the same IDs as form=ids would, as runs: a segment
// key's batch across segments of 100 is one range (one node claims them
// back to back), a permuted key's IDs are runs of one.
func TestIDRanges(t *testing.T) {
	f := newFixture(t)
	get := func(path string) httpwire.Ranges {
		t.Helper()
		status, body, _ := f.do(t, "GET", path, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var r httpwire.Ranges
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := get("/v1/ids/order?count=250&form=ranges")
	if len(r.Ranges) != 1 || r.Ranges[0].Start != "1" || r.Ranges[0].Count != 250 {
		t.Fatalf("ranges %+v, want [1, 251)", r)
	}
	r = get("/v1/ids/order?count=3&form=ranges")
	if len(r.Ranges) != 1 || r.Ranges[0].Start != "251" || r.Ranges[0].Count != 3 {
		t.Fatalf("ranges %+v, want [251, 254)", r)
	}
	var total int64
	r = get("/v1/ids/secret?count=5&form=ranges")
	for _, rg := range r.Ranges {
		if _, err := strconv.ParseInt(rg.Start, 10, 64); err != nil {
			t.Fatal(err)
		}
		total += rg.Count
	}
	if total != 5 {
		t.Fatalf("permuted key: %+v, want 5 IDs", r)
	}
	for _, path := range []string{"/v1/ids/order?form=lines", "/v1/ids/order?form=ranges&format=hex", "/v1/ids/order?form=ranges&form=ids"} {
		if status, body, _ := f.do(t, "GET", path, ""); status != 400 || errorCode(t, body) != "invalid_argument" {
			t.Errorf("GET %s: %d %s, want 400 invalid_argument", path, status, body)
		}
	}
}
