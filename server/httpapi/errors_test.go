package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// TestVocabularyHTTP walks every code of the vocabulary: an error carrying
// it is answered with the code's HTTP status, a known status text, and
// the code in the JSON body.
func TestVocabularyHTTP(t *testing.T) {
	h := &handler{log: quiet}
	for _, c := range idforge.Codes() {
		err := errors.New("a bug")
		if sentinel := c.Err(); sentinel != nil {
			err = fmt.Errorf("context: %w", sentinel)
		}
		rec := httptest.NewRecorder()
		h.writeError(rec, httptest.NewRequest("GET", "/v1/ids/order", nil), err)
		if rec.Code != c.HTTPStatus() || http.StatusText(rec.Code) == "" {
			t.Errorf("%s: HTTP %d, want %d", c, rec.Code, c.HTTPStatus())
		}
		if got := errorCode(t, rec.Body.String()); got != string(c) {
			t.Errorf("%s: body names %s", c, got)
		}
	}
}

// A 500 is a bug: it is logged, at error level, with the request.
func TestInternalIsLogged(t *testing.T) {
	var buf bytes.Buffer
	h := &handler{log: slog.New(slog.NewTextHandler(&buf, nil))}
	rec := httptest.NewRecorder()
	h.writeError(rec, httptest.NewRequest("POST", "/v1/keys", nil), errors.New("nil map write"))
	if rec.Code != 500 || errorCode(t, rec.Body.String()) != "internal" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for _, want := range []string{"level=ERROR", "method=POST", "path=/v1/keys", `err="nil map write"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log %q lacks %s", buf.String(), want)
		}
	}
}

// addFullKey adds the segment key "full" to f's store: its first segment
// fits below the largest int64, the next one does not, so after 100 IDs
// it has used up its space, as a key does after years of use.
func (f *fixture) addFullKey(t testing.TB) {
	t.Helper()
	k := idforge.Key{Name: "full", Strategy: idforge.StrategySegment, Step: 100, MaxID: math.MaxInt64 - 150}
	if err := f.store.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}

// drain issues from key until the server answers anything but 200, and
// returns that answer.
func (f *fixture) drain(t testing.TB, key string) (int, string) {
	t.Helper()
	for range 1000 {
		if status, body, _ := f.do(t, "GET", "/v1/ids/"+key+"?count=50", ""); status != 200 {
			return status, body
		}
	}
	t.Fatalf("%s issued 50,000 IDs without running out", key)
	return 0, ""
}

// TestReachableStates drives every endpoint into the states a request can
// reach (unknown names, bad input, a used-up key, the store down) and
// checks each answer's code and that its status is the code's, from the
// one vocabulary: none of them is a 500.
func TestReachableStates(t *testing.T) {
	f := newFixture(t)
	f.addFullKey(t)
	if status, body := f.drain(t, "full"); status != 409 || errorCode(t, body) != "space_exhausted" {
		t.Fatalf("a used-up key: %d %s, want 409 space_exhausted", status, body)
	}
	big := `{"key":"a","description":"` + strings.Repeat("x", maxBodyBytes) + `"}`
	type request struct {
		name, method, path, body string
		code                     idforge.Code
	}
	check := func(t *testing.T, tests []request) {
		for _, tt := range tests {
			status, body, _ := f.do(t, tt.method, tt.path, tt.body)
			if got := errorCode(t, body); got != string(tt.code) || status != tt.code.HTTPStatus() {
				t.Errorf("%s: %s %s: %d %s, want %d %s", tt.name, tt.method, tt.path, status, body, tt.code.HTTPStatus(), tt.code)
			}
		}
	}
	check(t, []request{
		{"used-up key", "GET", "/v1/ids/full", "", idforge.CodeSpaceExhausted},
		{"used-up key, Leaf", "GET", "/api/segment/get/full", "", idforge.CodeSpaceExhausted},
		{"used-up key, a batch", "GET", "/v1/ids/full?count=10000", "", idforge.CodeSpaceExhausted},
		{"unknown key", "GET", "/v1/ids/nope", "", idforge.CodeUnknownKey},
		{"unknown key, Leaf", "GET", "/api/segment/get/nope", "", idforge.CodeUnknownKey},
		{"unknown key state", "GET", "/v1/keys/nope", "", idforge.CodeUnknownKey},
		{"unknown serial", "GET", "/v1/serials/nope", "", idforge.CodeUnknownKey},
		{"bad count", "GET", "/v1/ids/order?count=0", "", idforge.CodeInvalidCount},
		{"bad serial count", "GET", "/v1/serials/job?count=10001", "", idforge.CodeInvalidCount},
		{"missing serial parameter", "GET", "/v1/serials/job", "", idforge.CodeInvalidArgument},
		{"malformed ID", "GET", "/v1/explain/x", "", idforge.CodeInvalidArgument},
		{"malformed JSON", "POST", "/v1/keys", `{"key":`, idforge.CodeInvalidArgument},
		{"body over the limit", "POST", "/v1/keys", big, idforge.CodeInvalidArgument},
		{"serial body over the limit", "POST", "/v1/serials", big, idforge.CodeInvalidArgument},
		{"malformed serial JSON", "POST", "/v1/serials", `[`, idforge.CodeInvalidArgument},
		{"taken name", "POST", "/v1/keys", `{"key":"order"}`, idforge.CodeKeyExists},
		{"Leaf segment on a snowflake key", "GET", "/api/segment/get/msg", "", idforge.CodeWrongStrategy},
		{"no such endpoint", "GET", "/v2/ids/order", "", idforge.CodeNotFound},
		{"wrong method", "DELETE", "/v1/keys", "", idforge.CodeMethodNotAllowed},
	})

	// The store down: every call that needs it is a 503 unavailable naming
	// the store's error, none a 500.
	f.store.Fail(errors.New("connection refused"))
	check(t, []request{
		{"list keys", "GET", "/v1/keys", "", idforge.CodeUnavailable},
		{"a key never used", "GET", "/v1/keys/secret", "", idforge.CodeUnavailable},
		{"issue from a key never used", "GET", "/v1/ids/secret", "", idforge.CodeUnavailable},
		{"Leaf, a key never used", "GET", "/api/segment/get/secret", "", idforge.CodeUnavailable},
		{"create a key", "POST", "/v1/keys", `{"key":"new"}`, idforge.CodeUnavailable},
		{"list serials", "GET", "/v1/serials", "", idforge.CodeUnavailable},
		{"a stored serial", "GET", "/v1/serials/stored", "", idforge.CodeUnavailable},
		{"define a serial", "POST", "/v1/serials", `{"name":"s2","template":"S@{seq:order}"}`, idforge.CodeUnavailable},
	})
}
