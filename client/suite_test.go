package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/idforge/idforge"
)

// variant is a mode with a set of options: every mode, and the remote ones
// with a range cache too.
type variant struct {
	name string
	mode mode
	opts []Option
}

func variants() []variant {
	var out []variant
	for _, m := range modes {
		out = append(out, variant{m.name, m, nil})
		if m.remote {
			out = append(out, variant{m.name + "+cache", m, []Option{WithRangeCache(50, 0.2)}})
		}
	}
	return out
}

// TestBehaviour runs one suite against every way of deploying idforge:
// code written against Client must not notice the difference.
func TestBehaviour(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			n := newNode(t, st, 5, 100)
			c := v.mode.new(t, []*node{n}, v.opts...)
			defer c.Close()

			t.Run("issues", func(t *testing.T) { testIssues(t, c) })
			t.Run("unique across goroutines", func(t *testing.T) { testConcurrent(t, c) })
			t.Run("sentinels", func(t *testing.T) { testSentinels(t, c, v.mode.remote) })
			t.Run("explain", func(t *testing.T) { testExplain(t, c, n) })
			t.Run("serials", func(t *testing.T) { testSerialNumbers(t, c) })
			t.Run("strings", func(t *testing.T) { testStrings(t, c) })
			t.Run("space runs out", func(t *testing.T) { testSpaceRunsOut(t, c) })
			t.Run("store down", func(t *testing.T) {
				st.Fail(errors.New("database unreachable"))
				defer st.Fail(nil)
				if _, err := c.Next(testCtx(t), "cold"); !errors.Is(err, idforge.ErrUnavailable) {
					t.Fatalf("Next with the store down and nothing buffered: %v, want ErrUnavailable", err)
				}
				if _, err := c.NextStrings(testCtx(t), "cold", 2); !errors.Is(err, idforge.ErrUnavailable) {
					t.Fatalf("NextStrings with the store down and nothing buffered: %v, want ErrUnavailable", err)
				}
			})
			t.Run("close", func(t *testing.T) {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				if err := c.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				if _, err := c.Next(testCtx(t), "order"); !errors.Is(err, idforge.ErrClosed) {
					t.Fatalf("Next after Close: %v, want ErrClosed", err)
				}
				if _, err := c.NextStrings(testCtx(t), "trace", 1); !errors.Is(err, idforge.ErrClosed) {
					t.Fatalf("NextStrings after Close: %v, want ErrClosed", err)
				}
				if _, err := c.NextSerial(testCtx(t), "bill", 1, nil); !errors.Is(err, idforge.ErrClosed) {
					t.Fatalf("NextSerial after Close: %v, want ErrClosed", err)
				}
			})
		})
	}
}

func testIssues(t *testing.T, c Client) {
	ctx := testCtx(t)
	first, err := c.Next(ctx, "order")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.NextN(ctx, "order", 5)
	if err != nil || len(batch) != 5 {
		t.Fatalf("NextN(5) = %v, %v", batch, err)
	}
	g := c.Key("order")
	one, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	more, err := g.NextN(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(append([]int64{first}, batch...), one), more...)
	for i := 1; i < len(all); i++ {
		if all[i] <= all[i-1] {
			t.Fatalf("segment IDs from one client and one node not increasing: %v", all)
		}
	}
	snow, err := c.NextN(ctx, "msg", 3)
	if err != nil || len(snow) != 3 || snow[0] < 1<<40 || !slices.IsSorted(snow) {
		t.Fatalf("NextN(msg, 3) = %v, %v", snow, err)
	}
}

// testSpaceRunsOut: a batch that crosses the end of a key's space comes
// back with the IDs before the end (the client refused the short answer,
// and the IDs it held were lost), then the key answers space_exhausted.
func testSpaceRunsOut(t *testing.T, c Client) {
	ctx := testCtx(t)
	var ids []int64
	for _, n := range []int{60, 60} {
		got, err := c.NextN(ctx, "top", n)
		if err != nil {
			t.Fatalf("NextN(top, %d) after %d: %v, want the IDs that fit", n, len(ids), err)
		}
		ids = append(ids, got...)
	}
	if len(ids) != 100 || ids[0] != idforge.MaxSegmentID-99 || ids[99] != idforge.MaxSegmentID {
		t.Fatalf("%d IDs, want the 100 up to %d", len(ids), int64(idforge.MaxSegmentID))
	}
	checkUnique(t, ids)
	if _, err := c.NextN(ctx, "top", 60); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("NextN past the end: %v, want ErrSpaceExhausted", err)
	}
}

func testConcurrent(t *testing.T, c Client) {
	const goroutines, rounds = 8, 150
	ctx := testCtx(t)
	var (
		mu   sync.Mutex
		ids  = map[string][]int64{}
		errs = make(chan error, goroutines)
		wg   sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			var mine = map[string][]int64{}
			for i := range rounds {
				key := "order"
				if (g+i)%3 == 0 {
					key = "msg"
				}
				if i%5 == 0 {
					got, err := c.NextN(ctx, key, 7)
					if err != nil {
						errs <- err
						return
					}
					mine[key] = append(mine[key], got...)
					continue
				}
				id, err := c.Next(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				mine[key] = append(mine[key], id)
			}
			mu.Lock()
			for k, v := range mine {
				ids[k] = append(ids[k], v...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkUnique(t, append(ids["order"], ids["msg"]...))
	if got := len(ids["order"]) + len(ids["msg"]); got != goroutines*(rounds/5*7+rounds*4/5) {
		t.Fatalf("%d IDs", got)
	}
}

func testSentinels(t *testing.T, c Client, remote bool) {
	ctx := testCtx(t)
	type call struct {
		name string
		err  func() error
		want error
	}
	calls := []call{
		{"Next unknown key", func() error { _, err := c.Next(ctx, "nope"); return err }, idforge.ErrUnknownKey},
		{"NextN unknown key", func() error { _, err := c.NextN(ctx, "nope", 3); return err }, idforge.ErrUnknownKey},
		{"Key unknown key", func() error { _, err := c.Key("nope").Next(ctx); return err }, idforge.ErrUnknownKey},
		{"Next empty key", func() error { _, err := c.Next(ctx, ""); return err }, idforge.ErrInvalidKey},
		{"Next key with a slash", func() error { _, err := c.Next(ctx, "a/b"); return err }, idforge.ErrInvalidKey},
		{"NextN 0", func() error { _, err := c.NextN(ctx, "order", 0); return err }, idforge.ErrInvalidCount},
		{"NextN -1", func() error { _, err := c.NextN(ctx, "order", -1); return err }, idforge.ErrInvalidCount},
		{"Explain -1", func() error { _, err := c.Explain(ctx, -1); return err }, idforge.ErrInvalidArgument},
		{"NextStrings unknown key", func() error { _, err := c.NextStrings(ctx, "nope", 2); return err }, idforge.ErrUnknownKey},
		{"NextStrings key with a slash", func() error { _, err := c.NextStrings(ctx, "a/b", 1); return err }, idforge.ErrInvalidKey},
		{"NextStrings 0", func() error { _, err := c.NextStrings(ctx, "trace", 0); return err }, idforge.ErrInvalidCount},
		{"NextStrings -1", func() error { _, err := c.NextStrings(ctx, "order", -1); return err }, idforge.ErrInvalidCount},
		{"NextSerial unknown serial", func() error { _, err := c.NextSerial(ctx, "nope", 1, nil); return err }, idforge.ErrUnknownKey},
		{"NextSerial empty name", func() error { _, err := c.NextSerial(ctx, "", 1, nil); return err }, idforge.ErrInvalidKey},
		{"NextSerial 0", func() error { _, err := c.NextSerial(ctx, "bill", 0, nil); return err }, idforge.ErrInvalidCount},
		{"NextSerial -1", func() error { _, err := c.NextSerial(ctx, "bill", -1, nil); return err }, idforge.ErrInvalidCount},
		// issuer.NextSerial refuses above idforge.MaxCount in process, the server remotely.
		{"NextSerial above the maximum", func() error { _, err := c.NextSerial(ctx, "bill", idforge.MaxCount+1, nil); return err }, idforge.ErrInvalidCount},
		{"NextSerial missing parameter", func() error { _, err := c.NextSerial(ctx, "job", 1, nil); return err }, idforge.ErrInvalidArgument},
		{"NextSerial malformed parameter", func() error {
			_, err := c.NextSerial(ctx, "job", 1, map[string]string{"area": "01x"})
			return err
		}, idforge.ErrInvalidArgument},
	}
	if remote {
		calls = append(calls,
			call{"NextN above the server's maximum", func() error { _, err := c.NextN(ctx, "order", idforge.MaxCount+1); return err }, idforge.ErrInvalidCount},
			call{"NextN 10^12", func() error { _, err := c.NextN(ctx, "order", 1e12); return err }, idforge.ErrInvalidCount},
			call{"NextStrings above the server's maximum", func() error { _, err := c.NextStrings(ctx, "order", idforge.MaxCount+1); return err }, idforge.ErrInvalidCount},
			call{"NextStrings 10^12", func() error { _, err := c.NextStrings(ctx, "order", 1e12); return err }, idforge.ErrInvalidCount},
			call{"NextSerial 10^12", func() error { _, err := c.NextSerial(ctx, "bill", 1e12, nil); return err }, idforge.ErrInvalidCount},
		)
	}
	for _, tc := range calls {
		err := tc.err()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		var srvErr *Error
		if remote && tc.want != idforge.ErrInvalidKey && tc.want != idforge.ErrInvalidCount && !errors.As(err, &srvErr) {
			t.Errorf("%s: %T is not the server's *Error", tc.name, err)
		}
	}
	if _, err := c.Next(ctx, "order"); err != nil {
		t.Fatalf("after the errors: %v", err)
	}
}

// testSerialNumbers issues the node's serials (testSerials), which draw
// on the key "invoice" that nothing else uses: the numbers are the same
// in every mode.
func testSerialNumbers(t *testing.T, c Client) {
	ctx := testCtx(t)
	for _, tc := range []struct {
		name   string
		n      int
		params map[string]string
		want   []string
	}{
		{"bill", 1, nil, []string{"B0001"}},
		{"bill", 3, nil, []string{"B0002", "B0003", "B0004"}},
		{"job", 2, map[string]string{"area": "010"}, []string{"010-0005", "010-0006"}},
		{"job", 1, map[string]string{"area": "7"}, []string{"7-0007"}},
		{"bill", 1, map[string]string{}, []string{"B0008"}},
	} {
		got, err := c.NextSerial(ctx, tc.name, tc.n, tc.params)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("NextSerial(%s, %d, %v) = %q, %v; want %q", tc.name, tc.n, tc.params, got, err, tc.want)
		}
	}
	// A parameter the template does not read is refused in every mode,
	// as a misspelt one would otherwise be ignored; nothing is drawn.
	if got, err := c.NextSerial(ctx, "job", 1, map[string]string{"area": "7", "unused": "x"}); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), `"unused"`) {
		t.Fatalf("NextSerial(job) with an unread parameter = %q, %v; want ErrInvalidArgument naming it", got, err)
	}
	many, err := c.NextSerial(ctx, "bill", 100, nil)
	if err != nil || len(many) != 100 || many[0] != "B0009" || many[99] != "B0108" {
		t.Fatalf("NextSerial(bill, 100) = %d values, %v", len(many), err)
	}
}

// testStrings issues string IDs: UUIDs of the uuidv7 key "trace", and
// the IDs of "ref" in its configured hex.
func testStrings(t *testing.T, c Client) {
	ctx := testCtx(t)
	var traces []string
	for _, n := range []int{1, 3} {
		got, err := c.NextStrings(ctx, "trace", n)
		if err != nil || len(got) != n {
			t.Fatalf("NextStrings(trace, %d) = %q, %v", n, got, err)
		}
		traces = append(traces, got...)
	}
	for i, s := range traces {
		u, err := uuid.Parse(s)
		if err != nil || u.Version() != 7 || u.String() != s {
			t.Fatalf("NextStrings(trace) gave %q: not a canonical UUIDv7 (%v)", s, err)
		}
		// Version 7 is time-ordered, and one generator's are strictly
		// increasing.
		if i > 0 && s <= traces[i-1] {
			t.Fatalf("UUIDs not increasing: %q", traces)
		}
	}
	refs, err := c.NextStrings(ctx, "ref", 2)
	if err != nil || !slices.Equal(refs, []string{"ff", "100"}) {
		t.Fatalf("NextStrings(ref, 2) = %q, %v; want ff 100 (the key's hex)", refs, err)
	}
	refs, err = c.NextStrings(ctx, "ref", 1)
	if err != nil || !slices.Equal(refs, []string{"101"}) {
		t.Fatalf("NextStrings(ref, 1) = %q, %v; want 101", refs, err)
	}
}

func testExplain(t *testing.T, c Client, n *node) {
	ctx := testCtx(t)
	id, err := c.Next(ctx, "msg")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Explain(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := explanation(n.gen.Layout(), id)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) || got.Time.Location().String() != "UTC" {
		t.Fatalf("Explain(%d) =\n%+v, want\n%+v", id, got, want)
	}
	if got.Worker != 5 {
		t.Fatalf("worker %d, want 5", got.Worker)
	}
}

// The error an *Error prints says what, which code and which server.
func TestErrorText(t *testing.T) {
	e := &Error{Server: "10.0.0.1:8080", Code: "unknown_key", Message: `idforge: unknown key: "nope"`, HTTPStatus: 404}
	if got, want := e.Error(), `idforge: unknown key: "nope" (unknown_key from 10.0.0.1:8080)`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	e = &Error{Server: "lb", Message: "Bad Gateway", HTTPStatus: 502}
	if got, want := e.Error(), "Bad Gateway (HTTP 502 from lb)"; got != want || !e.retriable() {
		t.Fatalf("%s (retriable %v), want %s", got, e.retriable(), want)
	}
	if errors.Is(e, idforge.ErrUnavailable) {
		t.Fatal("a proxy's 502 claims to be idforge's unavailable")
	}
}

func TestOptionsValidation(t *testing.T) {
	for name, tc := range map[string]struct {
		addrs []string
		opts  []Option
	}{
		"no address":        {nil, nil},
		"negative retries":  {[]string{"a:1"}, []Option{WithRetries(-1)}},
		"zero timeout":      {[]string{"a:1"}, []Option{WithTimeout(0)}},
		"batch 0":           {[]string{"a:1"}, []Option{WithRangeCache(0, 0.2)}},
		"batch too large":   {[]string{"a:1"}, []Option{WithRangeCache(idforge.MaxCount+1, 0.2)}},
		"refillAt 1":        {[]string{"a:1"}, []Option{WithRangeCache(100, 1)}},
		"refillAt negative": {[]string{"a:1"}, []Option{WithRangeCache(100, -0.1)}},
		"nil HTTP client":   {[]string{"a:1"}, []Option{WithHTTPClient(nil)}},
		"65 addresses":      {make([]string, 65), nil},
	} {
		for _, ctor := range []func([]string, ...Option) (Client, error){NewHTTP, NewGRPC} {
			if c, err := ctor(tc.addrs, tc.opts...); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
				if c != nil {
					c.Close()
				}
			}
		}
	}
	for _, addr := range []string{"ftp://x", "http://", "://x", "http://x/?q=1"} {
		if _, err := NewHTTP([]string{addr}); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("NewHTTP(%q): %v", addr, err)
		}
	}
	for addr, want := range map[string]string{
		"127.0.0.1:8080":               "http://127.0.0.1:8080",
		"http://h:1/":                  "http://h:1",
		"https://ids.example.com/idf/": "https://ids.example.com/idf",
	} {
		if got, err := baseURL(addr, false); err != nil || got != want {
			t.Errorf("baseURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if got, _ := baseURL("h:1", true); got != "https://h:1" {
		t.Errorf("with TLS: %s", got)
	}
}
