package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge/server/compat"
)

// Issue 24, item 6: no request that cannot carry values away consumes
// them. Every route that issues (the /v1 API, Leaf's, Tinyid's and
// Vesta's endpoints, mounted as idforge serve mounts them) answers HEAD
// and every method it does not document with 405, and the key's next
// ID shows that nothing was drawn.
func TestOnlyMethodsThatCarryValuesIssue(t *testing.T) {
	f := newFixture(t)
	tinyidVesta := httptest.NewServer(compat.New(f.iss, compat.Options{Logger: quiet}))
	t.Cleanup(tinyidVesta.Close)
	f.mustDo(t, "POST", "/v1/serials", `{"name":"inv","template":"I@{seq:order}"}`, 201)
	next := func() int64 {
		t.Helper()
		body := f.mustDo(t, "GET", "/api/segment/get/order", "", 200)
		v, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		srv     *httptest.Server
		path    string
		allowed string // the methods the route documents
		segment bool   // it draws from the segment key order
	}{
		{f.srv, "/v1/ids/order?count=100", "GET", true},
		{f.srv, "/v1/ids/order?count=100&form=ranges", "GET", true},
		{f.srv, "/v1/serials/inv?count=100", "GET", true},
		{f.srv, "/api/segment/get/order", "GET, POST", true},
		{f.srv, "/api/snowflake/get/msg", "GET, POST", false},
		{f.srv, "/api/snowflake/get", "GET, POST", false},
		{tinyidVesta, "/tinyid/id/nextId?bizType=order&batchSize=100", "GET, POST", true},
		{tinyidVesta, "/tinyid/id/nextIdSimple?bizType=order&batchSize=100", "GET, POST", true},
		{tinyidVesta, "/tinyid/id/nextSegmentId?bizType=order", "GET, POST", true},
		{tinyidVesta, "/tinyid/id/nextSegmentIdSimple?bizType=order", "GET, POST", true},
		{tinyidVesta, "/genid", "GET, POST", false},
	} {
		for _, method := range []string{"HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			before := next()
			req, err := http.NewRequest(method, c.srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 405 || resp.Header.Get("Allow") != c.allowed {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", method, c.path, resp.StatusCode, resp.Header.Get("Allow"), c.allowed)
			}
			if after := next(); c.segment && after != before+1 {
				t.Errorf("%s %s drew %d IDs of order", method, c.path, after-before-1)
			}
		}
		// The documented methods issue.
		for _, method := range strings.Split(c.allowed, ", ") {
			req, _ := http.NewRequest(method, c.srv.URL+c.path, nil)
			resp, err := c.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s %s: %d, want 200", method, c.path, resp.StatusCode)
			}
		}
	}
}
