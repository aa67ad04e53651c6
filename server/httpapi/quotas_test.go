package httpapi

import (
	"strings"
	"testing"
)

// Quotas are defined, listed, shown and retired through /v1/quotas; bad
// ones are refused with a specific 400, and a refusal is the documented
// 403 rejected naming the quota and when it resets, consuming nothing.
func TestQuotas(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ body, want string }{
		{`{"name":"q","keys":["order"],"limit":0,"per":"minute"}`, "limit 0 per minute"},
		{`{"name":"q","keys":["order"],"limit":-3,"per":"minute"}`, "limit -3"},
		{`{"name":"q","keys":["order"],"limit":3,"per":"week"}`, `unknown period \"week\"`},
		{`{"name":"q","keys":["o*rder"],"limit":3,"per":"minute"}`, `key pattern \"o*rder\"`},
		{`{"name":"q","keys":["order"],"formats":["octal"]}`, `unknown format \"octal\"`},
	} {
		status, body, _ := f.do(t, "POST", "/v1/quotas", tc.body)
		if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %s; want 400 invalid_argument mentioning %s", tc.body, status, body, tc.want)
		}
	}
	if status, body, _ := f.do(t, "POST", "/v1/quotas", `{"name":"orders","keys":["order"],"limit":3,"per":"day"}`); status != 201 {
		t.Fatalf("POST: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/v1/quotas", `{"name":"orders","closed":true}`); status != 409 {
		t.Fatalf("POST again: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/ids/order?count=2", ""); status != 200 || !strings.Contains(body, `"1","2"`) {
		t.Fatalf("within the quota: %d %s", status, body)
	}
	status, body, _ := f.do(t, "GET", "/v1/ids/order?count=2", "")
	if status != 403 || errorCode(t, body) != "rejected" || !strings.Contains(body, "quota orders") || !strings.Contains(body, "resets at") {
		t.Fatalf("over the quota: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/ids/order", ""); status != 200 || !strings.Contains(body, `"3"`) {
		t.Fatalf("the last of the quota: %d %s (the refused call took nothing)", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/quotas", ""); status != 200 || !strings.Contains(body, `"name":"orders"`) || !strings.Contains(body, `"origin":"api"`) {
		t.Fatalf("GET: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "DELETE", "/v1/quotas/orders", ""); status != 200 || !strings.Contains(body, `"retired":true`) {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/ids/order", ""); status != 200 {
		t.Fatalf("retired quota: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/quotas/nope", ""); status != 404 || errorCode(t, body) != "unknown_key" {
		t.Fatalf("unknown: %d %s", status, body)
	}
}

// Issue 24, item 8: a quota says what is wrong with it in its own terms.
// One re-created under a retired quota's name says it was retired and
// what to do; one limited to a token the node does not know (here: a node
// that checks no tokens) is refused, as it would never apply.
func TestQuotaRefusalsSayWhy(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "POST", "/v1/quotas", `{"name":"old","keys":["order"],"limit":3,"per":"day"}`, 201)
	f.mustDo(t, "DELETE", "/v1/quotas/old", "", 200)
	for _, c := range []struct {
		body   string
		status int
		code   string
		says   []string
	}{
		{`{"name":"old","keys":["order"],"limit":5,"per":"day"}`, 409, "key_exists", []string{`quota \"old\" was retired`, "choose a new name"}},
		{`{"name":"mine","keys":["order"],"tokens":["ghost"],"limit":5,"per":"day"}`, 400, "invalid_argument", []string{`token \"ghost\"`, "checks no tokens", "never apply"}},
	} {
		status, body, _ := f.do(t, "POST", "/v1/quotas", c.body)
		if status != c.status || errorCode(t, body) != c.code {
			t.Errorf("POST %s: %d %s, want %d %s", c.body, status, body, c.status, c.code)
		}
		for _, want := range c.says {
			if !strings.Contains(body, want) {
				t.Errorf("POST %s: %s\nwant it to say %s", c.body, body, want)
			}
		}
	}
}
