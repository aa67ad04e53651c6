package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/httpwire"
)

func TestKeyAdmin(t *testing.T) {
	f := newFixture(t)
	if status, body, _ := f.do(t, "GET", "/v1/ids/order", ""); status != 200 {
		t.Fatalf("issue: %d %s", status, body)
	}
	status, body, _ := f.do(t, "PATCH", "/v1/keys/order", `{"step":50,"description":"orders","min_step":20,"max_step":400}`)
	if status != 200 {
		t.Fatalf("PATCH: %d %s", status, body)
	}
	var k httpwire.Key
	if err := json.Unmarshal([]byte(body), &k); err != nil {
		t.Fatal(err)
	}
	if k.Step != 50 || k.Description != "orders" || k.MinStep != 20 || k.MaxStep != 400 || k.MaxID != "101" || k.Retired {
		t.Fatalf("PATCH answered %+v", k)
	}

	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code, says               string
	}{
		{"empty change", "PATCH", "/v1/keys/order", `{}`, 400, "invalid_argument", "nothing to change"},
		{"unknown field", "PATCH", "/v1/keys/order", `{"max_id":1}`, 400, "invalid_argument", "max_id"},
		{"step 0", "PATCH", "/v1/keys/order", `{"step":0}`, 400, "invalid_argument", "out of range"},
		{"step of a snowflake key", "PATCH", "/v1/keys/msg", `{"step":5}`, 400, "invalid_argument", "segment keys only"},
		{"min above max", "PATCH", "/v1/keys/order", `{"min_step":500}`, 400, "invalid_argument", "above max_step"},
		{"unknown key", "PATCH", "/v1/keys/nope", `{"step":5}`, 404, "unknown_key", "nope"},
		{"order changed", "PATCH", "/v1/keys/order", `{"order":"global"}`, 400, "unsafe_change", "node order"},
		{"not an order", "PATCH", "/v1/keys/order", `{"order":"strict"}`, 400, "invalid_argument", "want node or global"},
		{"order of a snowflake key", "POST", "/v1/keys", `{"key":"ev","strategy":"snowflake","order":"global"}`, 400, "invalid_argument", "segment keys only"},
		{"retire unknown", "DELETE", "/v1/keys/nope", ``, 404, "unknown_key", "nope"},
		{"wrong method", "PUT", "/v1/keys/order", `{}`, 405, "method_not_allowed", "PATCH"},
	} {
		status, body, _ := f.do(t, c.method, c.path, c.body)
		if status != c.status || errorCode(t, body) != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d %s saying %q", c.name, status, body, c.status, c.code, c.says)
		}
	}

	status, body, _ = f.do(t, "DELETE", "/v1/keys/order", "")
	if status != 200 || !strings.Contains(body, `"retired":true`) {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/v1/ids/order", "", 409, "retired"},
		{"GET", "/api/segment/get/order", "", 409, "retired"},
		{"PATCH", "/v1/keys/order", `{"step":5}`, 409, "retired"},
		{"POST", "/v1/keys", `{"key":"order"}`, 409, "key_exists"},
	} {
		status, body, _ := f.do(t, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, `"`+c.code+`"`) {
			t.Errorf("%s %s after DELETE: %d %s, want %d %s", c.method, c.path, status, body, c.status, c.code)
		}
	}
	if k, _ := f.store.Key(t.Context(), "order"); k.MaxID < 101 {
		t.Fatalf("max_id went down to %d", k.MaxID)
	}
}

// A key created in global order shows it, and is served in it, on the
// Leaf endpoint too.
func TestKeyInGlobalOrder(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"tx","order":"global","step":10}`)
	if status != 201 || !strings.Contains(body, `"order":"global"`) {
		t.Fatalf("POST: %d %s", status, body)
	}
	for want := 1; want <= 3; want++ {
		if status, body, _ := f.do(t, "GET", "/api/segment/get/tx", ""); status != 200 || body != strconv.Itoa(want) {
			t.Fatalf("Leaf: %d %s, want %d", status, body, want)
		}
	}
	status, body, _ = f.do(t, "GET", "/v1/keys/tx", "")
	var k httpwire.Key
	if err := json.Unmarshal([]byte(body), &k); status != 200 || err != nil || k.Order != "global" || k.Segment == nil || k.Segment.Buffered != 0 {
		t.Fatalf("GET: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "PATCH", "/v1/keys/tx", `{"order":"global","description":"ledger"}`); status != 200 {
		t.Fatalf("PATCH with its own order: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/keys", ""); status != 200 || !strings.Contains(body, `"order":"global"`) || !strings.Contains(body, `"order":"node"`) {
		t.Fatalf("GET /v1/keys: %d %s", status, body)
	}
}
