package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/httperr"
)

// Issue 24, item 7: strictness says the right words. Each refusal names
// what the request got wrong in the API's terms: the endpoint's own
// parameters (not another method's), a serial parameter its template
// does not read, a field by its JSON name (never a Go type); and JSON
// answers show & as &.
func TestStrictnessSaysTheRightWords(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		method, path, body string
		says               []string
		never              []string
	}{
		{"POST", "/v1/keys?dryrun=1", `{"key":"x"}`,
			[]string{`unknown query parameter "dryrun"`, "POST /v1/keys takes no query parameters"}, []string{"limit", "after"}},
		{"POST", "/v1/keys?limit=5", `{"key":"x"}`,
			[]string{`unknown query parameter "limit"`, "POST /v1/keys"}, nil},
		{"GET", "/v1/keys?dryrun=1", "",
			[]string{"GET /v1/keys takes limit, after"}, nil},
		{"GET", "/v1/serials/job?param.area=1&param.unit=0001&param.colour=red", "",
			[]string{`serial "job" reads no parameter "colour"`, "area, unit"}, nil},
		{"POST", "/v1/keys", `{"key":5}`,
			[]string{`field "key": want a string, got a number`}, []string{"Go", "struct", "createKeyRequest"}},
		{"POST", "/v1/keys", `{"key":"x","step":"10"}`,
			[]string{`field "step": want a whole number, got a string`}, []string{"Go", "int64"}},
		{"GET", "/v1/ids/order?a%26b=1", "",
			[]string{`"a&b"`}, []string{`\u0026`}},
	} {
		status, body, _ := f.do(t, c.method, c.path, c.body)
		if status != 400 || errorCode(t, body) != "invalid_argument" {
			t.Errorf("%s %s %s: %d %s, want 400 invalid_argument", c.method, c.path, c.body, status, body)
			continue
		}
		var answer httperr.Body
		if err := json.Unmarshal([]byte(body), &answer); err != nil {
			t.Fatal(err)
		}
		msg := answer.Error.Message
		for _, s := range c.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s %s %s: %s\nwant it to say %s", c.method, c.path, c.body, msg, s)
			}
		}
		for _, s := range c.never {
			if strings.Contains(msg, s) || strings.Contains(body, s) {
				t.Errorf("%s %s %s: %s\nwant it not to say %s", c.method, c.path, c.body, body, s)
			}
		}
	}
	// The parameters the template reads still work.
	f.mustDo(t, "GET", "/v1/serials/job?param.area=1&param.unit=0001", "", 200)
}
