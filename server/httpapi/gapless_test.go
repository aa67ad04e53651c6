package httpapi

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/sqlite"
)

// A gap-free serial over HTTP on SQLite: reserve, commit, void, expiry
// and the audit, each error with its code and status; plain issuing
// refused; a store that cannot keep one refuses the definition.
func TestGaplessSerials(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Clock: clock})
	srv := httptest.NewServer(New(iss, Options{Logger: quiet}))
	t.Cleanup(func() { srv.Close(); iss.Close(); st.Close() })
	f := &fixture{srv: srv, iss: iss}
	want := func(method, path, body string, status int, code string) string {
		t.Helper()
		got, resp, _ := f.do(t, method, path, body)
		if got != status || code != "" && errorCode(t, resp) != code {
			t.Fatalf("%s %s %s: %d %s, want %d %s", method, path, body, got, resp, status, code)
		}
		return resp
	}
	want("POST", "/v1/serials", `{"name":"inv","template":"INV@{date:yyyy}-@{seq:n,width=4}@{param:c,max=2}","gapless":true,"expiry":"1m"}`, 201, "")
	if resp := want("GET", "/v1/serials", "", 200, ""); !strings.Contains(resp, `"gapless":true`) || !strings.Contains(resp, `"expiry":"1m0s"`) {
		t.Fatalf("GET /v1/serials: %s", resp)
	}
	reserve := func() httpwire.Reservation {
		t.Helper()
		var r httpwire.Reservation
		if err := json.Unmarshal([]byte(want("POST", "/v1/serials/inv/reserve?param.c=X", "", 200, "")), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r1 := reserve()
	if r1.Number != 1 || r1.Value != "INV2026-0001X" || r1.State != "reserved" || !r1.Expires.Equal(clock.Now().Add(time.Minute)) {
		t.Fatalf("reserve: %+v", r1)
	}
	end := func(step, id, reason string) string {
		b, _ := json.Marshal(httpwire.End{Reservation: id, Reason: reason})
		return string(b)
	}
	if resp := want("POST", "/v1/serials/inv/commit", end("commit", r1.Reservation, ""), 200, ""); !strings.Contains(resp, `"state":"committed"`) {
		t.Fatal(resp)
	}
	want("POST", "/v1/serials/inv/commit", end("commit", r1.Reservation, ""), 409, "already_committed")
	r2, r3 := reserve(), reserve()
	want("POST", "/v1/serials/inv/void", end("void", r2.Reservation, ""), 400, "invalid_argument")
	want("POST", "/v1/serials/inv/void", end("void", r2.Reservation, "cancelled"), 200, "")
	want("POST", "/v1/serials/inv/commit", end("commit", r2.Reservation, ""), 409, "reservation_voided")
	want("POST", "/v1/serials/inv/commit", end("commit", "7-0123456789abcdef", ""), 404, "unknown_reservation")
	clock.Add(2 * time.Minute)
	want("POST", "/v1/serials/inv/commit", end("commit", r3.Reservation, ""), 409, "reservation_expired")
	want("GET", "/v1/serials/inv", "", 400, "wrong_strategy")
	want("POST", "/v1/serials/job/reserve", "", 404, "unknown_key")
	want("GET", "/v1/serials/inv/reserve", "", 405, "method_not_allowed")
	want("GET", "/v1/serials/inv/audit?from=x", "", 400, "invalid_argument")
	var audit httpwire.Audit
	if err := json.Unmarshal([]byte(want("GET", "/v1/serials/inv/audit?from=1&to=5", "", 200, "")), &audit); err != nil {
		t.Fatal(err)
	}
	if audit.Last != 3 || audit.To != 3 || len(audit.Numbers) != 3 || audit.Numbers[1].Reason != "cancelled" ||
		audit.Numbers[2].Reason != idforge.ReasonExpired || audit.Numbers[0].State != "committed" || audit.Numbers[0].Reservation != "" {
		t.Fatalf("audit: %+v", audit)
	}

	// A store that cannot keep a gap-free serial refuses it, saying why.
	resp := want("POST", "/v1/serials", `{"name":"x","template":"X@{seq:n}","gapless":true}`, 201, "")
	_ = resp
	mf := newFixture(t)
	if status, body, _ := mf.do(t, "POST", "/v1/serials", `{"name":"g","template":"G@{seq:n}","gapless":true}`); status != 400 ||
		errorCode(t, body) != "invalid_argument" || !strings.Contains(body, "gapless needs a SQL store") {
		t.Fatalf("memstore: %d %s", status, body)
	}
	want("POST", "/v1/serials", `{"name":"two","template":"@{seq:a}-@{seq:b}","gapless":true}`, 400, "invalid_argument")
	want("POST", "/v1/serials", `{"name":"plain","template":"P@{seq:n}","reuse_expired":true}`, 400, "invalid_argument")
}
