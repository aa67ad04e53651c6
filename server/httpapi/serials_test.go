package httpapi

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
)

// POST /v1/serials refuses, with 400 invalid_argument naming the problem,
// every template that could issue the same serial twice, and stores none
// of them.
func TestSerialDefinitionsMustBeUnique(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		template string
		mention  []string
	}{
		{"JUSTTEXT", []string{"col 1", "no counter", "@{seq:KEY}"}},
		{"R@{random:4}", []string{"no counter", "random characters"}},
		{"@{date:yyyyMMdd}-@{param:shop}", []string{"no counter"}},
		{"@{param:shop}@{seq:order}", []string{"col 14", "seq:order", "param part at col 1"}},
		{"@{seq:order}@{seq:order}", []string{"col 1", "seq part at col 13"}},
		{"S@{seq:order,width=3,pad=1}", []string{"pad=1"}},
	} {
		body, _ := json.Marshal(map[string]string{"name": "rep", "template": tc.template})
		status, resp, _ := f.do(t, "POST", "/v1/serials", string(body))
		if status != 400 || errorCode(t, resp) != "invalid_argument" {
			t.Errorf("POST %s: %d %s, want 400 invalid_argument", tc.template, status, resp)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(resp, jsonText(m)) {
				t.Errorf("POST %s: %s does not mention %q", tc.template, resp, m)
			}
		}
	}
	if status, body, _ := f.do(t, "GET", "/v1/serials/rep", ""); status != 404 || errorCode(t, body) != "unknown_key" {
		t.Fatalf("a refused serial was stored: %d %s", status, body)
	}
	// A unique one is accepted, and issues distinct serials.
	status, body, _ := f.do(t, "POST", "/v1/serials", `{"name":"shop","template":"@{param:shop}-@{seq:order}"}`)
	if status != 201 {
		t.Fatalf("unique template refused: %d %s", status, body)
	}
	seen := map[string]bool{}
	for _, shop := range []string{"A12", "A1"} {
		status, body, _ = f.do(t, "GET", "/v1/serials/shop?count=20&param.shop="+shop, "")
		var resp httpwire.Serials
		if status != 200 || json.Unmarshal([]byte(body), &resp) != nil || len(resp.Values) != 20 {
			t.Fatalf("shop %s: %d %s", shop, status, body)
		}
		for _, v := range resp.Values {
			if seen[v] {
				t.Fatalf("%s issued twice", v)
			}
			seen[v] = true
		}
	}
}

// A key at 999,998 under S@{seq:small,width=6}: ?count=5 serves the two
// serials that fit; after that every request is refused with
// space_exhausted, and no request that was refused used up an ID: the
// key's next ID is still 1,000,000.
func TestSerialWidthRunsOut(t *testing.T) {
	f := newFixture(t)
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"small","start":999998}`); status != 201 {
		t.Fatalf("create key: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/v1/serials", `{"name":"s6","template":"S@{seq:small,width=6}"}`); status != 201 {
		t.Fatalf("create serial: %d %s", status, body)
	}
	status, body, _ := f.do(t, "GET", "/v1/serials/s6?count=5", "")
	if status != 200 || body != `{"serial":"s6","values":["S999998","S999999"]}`+"\n" {
		t.Fatalf("count=5 at 999998: %d %s; want the two that fit", status, body)
	}
	// The status is the error table's for space_exhausted (never the 500
	// of an unknown error once that code is in the table).
	wantStatus := idforge.ErrorCode(idforge.ErrSpaceExhausted).HTTPStatus()
	for _, path := range []string{"/v1/serials/s6?count=5", "/v1/serials/s6", "/v1/serials/s6?count=1"} {
		status, body, _ := f.do(t, "GET", path, "")
		if status != wantStatus || errorCode(t, body) != "space_exhausted" || !strings.Contains(body, "width=6") {
			t.Fatalf("%s after the width ran out: %d %s, want %d space_exhausted naming width=6", path, status, body, wantStatus)
		}
	}
	status, body, _ = f.do(t, "GET", "/v1/ids/small", "")
	if status != 200 || !strings.Contains(body, `"ids":["1000000"]`) {
		t.Fatalf("the key after the refusals: %d %s; want 1000000, nothing used up", status, body)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A parameter value outside its chars= set is refused naming the
// character the user sent, its position and its code point, never a raw
// byte; and the refusal uses up no ID.
func TestSerialParamNamesTheCharacter(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ area, want string }{
		{"订单", `parameter \"area\": character 1 '订' (U+8BA2) is not in chars=digits`},
		{"01é", `parameter \"area\": character 3 'é' (U+00E9) is not in chars=digits`},
		{"0%E8", `parameter \"area\": character 2 (byte 0xE8, which is not UTF-8) is not in chars=digits`},
	} {
		area := tc.area
		if !strings.Contains(area, "%") {
			area = url.QueryEscape(area)
		}
		status, body, _ := f.do(t, "GET", "/v1/serials/job?param.unit=0001&param.area="+area, "")
		if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, tc.want) {
			t.Errorf("area %q: %d %s, want 400 invalid_argument saying %s", tc.area, status, body, tc.want)
		}
	}
	status, body, _ := f.do(t, "GET", "/v1/serials/job?param.unit=0001&param.area=10", "")
	if status != 200 || !strings.Contains(body, `"10-0001-00001"`) {
		t.Fatalf("after the refusals: %d %s, want 10-0001-00001 (nothing used up)", status, body)
	}
}

// A checksum over text whose digits only a parameter gives: a request
// whose value has none is refused before any number is drawn (it failed
// after drawing, using up an ID), and a template whose checksum need not
// have any digit at all is refused at definition.
func TestSerialChecksumWithoutDigits(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "POST", "/v1/serials", `{"name":"tag","template":"@{param:p}@{checksum:luhn}-@{seq:order,width=6}"}`)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	for range 3 {
		status, body, _ = f.do(t, "GET", "/v1/serials/tag?count=4&param.p=ab", "")
		if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, "has no digits") || !strings.Contains(body, `parameter \"p\" is \"ab\"`) {
			t.Fatalf("no digits: %d %s, want 400 invalid_argument naming the parameter", status, body)
		}
	}
	status, body, _ = f.do(t, "GET", "/v1/serials/tag?param.p=a7", "")
	if status != 200 || !strings.Contains(body, `"values":["a7`) || !strings.Contains(body, `-000001"]`) {
		t.Fatalf("after the refusals: %d %s, want the key's first ID, 000001 (nothing used up)", status, body)
	}
	for _, tmpl := range []string{"ab@{checksum:luhn}@{seq:order}", "@{random:3,chars=alnum}@{checksum:mod}@{seq:order}"} {
		body, _ := json.Marshal(map[string]string{"name": "never", "template": tmpl})
		status, resp, _ := f.do(t, "POST", "/v1/serials", string(body))
		if status != 400 || errorCode(t, resp) != "invalid_argument" || !strings.Contains(resp, "need not have any") {
			t.Errorf("POST %s: %d %s, want 400 invalid_argument", tmpl, status, resp)
		}
	}
}

// A serial without width= over a key that runs out of int64 within a
// batch serves the serials before the end (the batch failed whole, using
// up the IDs before the end), then answers space_exhausted.
func TestSerialBatchCrossingTheKeysEnd(t *testing.T) {
	f := newFixture(t)
	start := strconv.FormatInt(idforge.MaxSegmentID-99, 10)
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"top","step":100,"start":`+start+`}`); status != 201 {
		t.Fatalf("create key: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/v1/serials", `{"name":"t","template":"T@{seq:top}"}`); status != 201 {
		t.Fatalf("create serial: %d %s", status, body)
	}
	var values []string
	for _, count := range []string{"60", "60"} {
		status, body, _ := f.do(t, "GET", "/v1/serials/t?count="+count, "")
		var resp httpwire.Serials
		if status != 200 || json.Unmarshal([]byte(body), &resp) != nil {
			t.Fatalf("count=%s after %d: %d %s, want the serials that fit", count, len(values), status, body)
		}
		values = append(values, resp.Values...)
	}
	if len(values) != 100 || values[0] != "T"+start || values[99] != "T"+strconv.FormatInt(idforge.MaxSegmentID, 10) {
		t.Fatalf("%d serials, %q … %q; want the 100 up to the last ID", len(values), values[0], values[len(values)-1])
	}
	wantStatus := idforge.ErrorCode(idforge.ErrSpaceExhausted).HTTPStatus()
	if status, body, _ := f.do(t, "GET", "/v1/serials/t?count=5", ""); status != wantStatus || errorCode(t, body) != "space_exhausted" {
		t.Fatalf("past the end: %d %s, want %d space_exhausted", status, body, wantStatus)
	}
}
