package httpapi

import (
	"encoding/json"
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
