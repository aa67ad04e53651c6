package httpapi

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 24, item 1: retiring a key stops it at once on this node, for
// every strategy and every route that issues from it, serials drawing
// from it included. The node has seen many keys first, so that the
// retired ones sit in the issuer's published key map (where a replaced
// entry used to go on answering until the next refresh).
func TestRetireStopsEveryStrategyAtOnce(t *testing.T) {
	f := newFixture(t)
	for n := range 40 {
		key := fmt.Sprintf("filler%d", n)
		f.mustDo(t, "POST", "/v1/keys", `{"key":"`+key+`"}`, 201)
		f.mustDo(t, "GET", "/v1/ids/"+key, "", 200)
	}
	keys := map[string]string{"seg": "segment", "snow": "snowflake", "u7": "uuidv7", "ul": "ulid", "u4": "uuidv4"}
	for key, strategy := range keys {
		f.mustDo(t, "POST", "/v1/keys", `{"key":"`+key+`","strategy":"`+strategy+`"}`, 201)
		f.mustDo(t, "GET", "/v1/ids/"+key+"?count=3", "", 200)
	}
	f.mustDo(t, "POST", "/v1/serials", `{"name":"bysnow","template":"S@{seq:snow}"}`, 201)
	f.mustDo(t, "POST", "/v1/serials", `{"name":"byseg","template":"G@{seq:seg,width=6}"}`, 201)
	for _, s := range []string{"bysnow", "byseg"} {
		f.mustDo(t, "GET", "/v1/serials/"+s, "", 200)
	}

	routes := map[string][]string{
		"seg":  {"/v1/ids/seg", "/v1/ids/seg?count=5", "/v1/ids/seg?format=base62", "/v1/ids/seg?count=5&form=ranges", "/api/segment/get/seg", "/v1/serials/byseg"},
		"snow": {"/v1/ids/snow", "/v1/ids/snow?count=5", "/v1/ids/snow?format=hex", "/api/snowflake/get/snow", "/v1/serials/bysnow"},
		"u7":   {"/v1/ids/u7", "/v1/ids/u7?count=5"},
		"ul":   {"/v1/ids/ul", "/v1/ids/ul?count=5"},
		"u4":   {"/v1/ids/u4", "/v1/ids/u4?count=5"},
	}
	for key := range keys {
		if status, body, _ := f.do(t, "DELETE", "/v1/keys/"+key, ""); status != 200 || !strings.Contains(body, `"retired":true`) {
			t.Fatalf("DELETE /v1/keys/%s: %d %s", key, status, body)
		}
		for _, path := range routes[key] {
			// Twice: the first refusal must not be the last.
			for range 2 {
				status, body, _ := f.do(t, "GET", path, "")
				if status != 409 || errorCode(t, body) != "retired" {
					t.Errorf("GET %s after retiring %s: %d %s, want 409 retired", path, key, status, body)
				}
			}
		}
	}
	// The keys that were not retired issue on; the retired segment key
	// counts in no readiness.
	f.mustDo(t, "GET", "/v1/ids/filler7", "", 200)
	if body := f.mustDo(t, "GET", "/readyz?verbose=1", "", 200); strings.Contains(body, `"seg"`) || !strings.Contains(body, `"filler7"`) {
		t.Errorf("/readyz?verbose=1 after retiring seg: %s", body)
	}
}

// mustDo runs a request and fails the test unless it answers status.
func (f *fixture) mustDo(t testing.TB, method, path, body string, status int) string {
	t.Helper()
	got, resp, _ := f.do(t, method, path, body)
	if got != status {
		t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, got, resp, status)
	}
	return resp
}
