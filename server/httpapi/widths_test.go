package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

// widthFixture serves keys whose IDs pass an 8-bit permutation, so they
// can issue nothing above 255: "f" through its format (feistel:bits=8),
// and "p", "q", "s", "u" and "old" through the obfuscate plugin (bits 8).
// "old" is in the store before the plugin is set up over it (created
// straight in the store, so no check saw it), at 1000; "oldsf" is a
// snowflake key there too.
type widthFixture struct {
	*fixture
	format, plug *obfuscate.Permutation
}

func newWidthFixture(t *testing.T) *widthFixture {
	t.Helper()
	key := []byte("a width test key, 16+ bytes")
	format, err := obfuscate.ParseFormat("feistel:bits=8")
	if err != nil {
		t.Fatal(err)
	}
	if format, err = format.WithKey(key); err != nil {
		t.Fatal(err)
	}
	perm, err := obfuscate.New(key, 8)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "old", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1000},
		{Name: "oldsf", Strategy: idforge.StrategySnowflake},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	gen, err := snowflake.New(snowflake.Settings{Worker: 5, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	chain := plugin.NewChain(nil, plugin.Scoped(plugin.NewObfuscate(perm, 0), "p", "q", "s", "u", "old", "oldsf"))
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Plugins: chain,
		Formats: map[string]obfuscate.Format{"f": format},
		Segment: segment.Settings{RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond}})
	srv := httptest.NewServer(New(iss, Options{Logger: quiet}))
	t.Cleanup(func() {
		srv.Close()
		iss.Close()
		gen.Close()
	})
	return &widthFixture{fixture: &fixture{store: st, srv: srv}, format: format.Permute, plug: perm}
}

// A batch that crosses what a key's permutation takes answers the IDs
// that fit (it failed whole, using them all up); once none fits, every
// call answers space_exhausted with its documented status, never a 500.
// Both for a key's format and for the obfuscate plugin.
func TestWidthLimitedBatchesServeWhatFits(t *testing.T) {
	f := newWidthFixture(t)
	wantStatus := idforge.ErrorCode(idforge.ErrSpaceExhausted).HTTPStatus()
	for key, perm := range map[string]*obfuscate.Permutation{"f": f.format, "p": f.plug} {
		if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"`+key+`","start":200,"step":50}`); status != 201 {
			t.Fatalf("%s: create: %d %s", key, status, body)
		}
		var raws []int64
		for _, count := range []int{40, 40} {
			status, body, _ := f.do(t, "GET", "/v1/ids/"+key+"?format=decimal&count="+strconv.Itoa(count), "")
			var got httpwire.IDs
			if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
				t.Fatalf("%s: count=%d after %d: %d %s, want the IDs that fit", key, count, len(raws), status, body)
			}
			for _, s := range got.IDs {
				id, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				raw, err := perm.Decode(id)
				if err != nil {
					t.Fatalf("%s: %d is not a permuted ID: %v", key, id, err)
				}
				raws = append(raws, raw)
			}
		}
		// 200 to 255: every ID the permutation takes, once, in order.
		if len(raws) != 56 || raws[0] != 200 || raws[55] != 255 {
			t.Fatalf("%s: issued %d IDs %v, want 200..255", key, len(raws), raws)
		}
		for j := 1; j < len(raws); j++ {
			if raws[j] != raws[j-1]+1 {
				t.Fatalf("%s: %d after %d", key, raws[j], raws[j-1])
			}
		}
		for _, path := range []string{"/v1/ids/" + key, "/v1/ids/" + key + "?count=5", "/api/segment/get/" + key} {
			status, body, _ := f.do(t, "GET", path, "")
			if status != wantStatus || !strings.Contains(body, "space_exhausted") || !strings.Contains(body, "up to 255") {
				t.Fatalf("%s past 255: %d %s, want %d space_exhausted saying what it takes", path, status, body, wantStatus)
			}
		}
	}
	// A key that was in the store before the plugin was set up over it:
	// past its width from the start, it answers space_exhausted, never a
	// 500, whether it is a segment or a snowflake key.
	for _, key := range []string{"old", "oldsf"} {
		status, body, _ := f.do(t, "GET", "/v1/ids/"+key+"?count=3", "")
		if status != wantStatus || !strings.Contains(body, "space_exhausted") || !strings.Contains(body, "plugin obfuscate (8 bits)") {
			t.Fatalf("%s: %d %s, want %d space_exhausted naming the plugin", key, status, body, wantStatus)
		}
	}
}

// A key is held at creation to what the obfuscate plugin that applies to
// it takes, as to its format: one rule, issuer.CheckKey.
func TestKeysCheckedAgainstPluginWidth(t *testing.T) {
	f := newWidthFixture(t)
	for _, tc := range []struct{ body, says string }{
		{`{"key":"q","start":300}`, "plugin obfuscate (8 bits) takes no ID above that"},
		{`{"key":"q","start":250,"step":10}`, "start 250 out of range [1, 246] for step 10"},
		{`{"key":"q"}`, "step 1000 out of range [1, 255]"},
		{`{"key":"s","strategy":"snowflake"}`, "snowflake IDs grow through all 63 bits, but plugin obfuscate (8 bits) permutes only 8; give it bits = 63"},
	} {
		status, body, _ := f.do(t, "POST", "/v1/keys", tc.body)
		if status != http.StatusBadRequest || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, tc.says) {
			t.Errorf("POST %s: %d %s, want 400 invalid_argument saying %q", tc.body, status, body, tc.says)
		}
	}
	// Keys the plugin does not see are not held to it: one outside its
	// keys, and a uuidv7 key (the plugin permutes integers).
	for _, body := range []string{`{"key":"free","start":300}`, `{"key":"u","strategy":"uuidv7"}`} {
		if status, resp, _ := f.do(t, "POST", "/v1/keys", body); status != 201 {
			t.Errorf("POST %s: %d %s, want 201", body, status, resp)
		}
	}
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"q","start":246,"step":10}`); status != 201 {
		t.Fatalf("the last start that fits: %d %s", status, body)
	}
}
