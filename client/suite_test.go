package client

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

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
			t.Run("store down", func(t *testing.T) {
				st.Fail(errors.New("database unreachable"))
				defer st.Fail(nil)
				if _, err := c.Next(testCtx(t), "cold"); !errors.Is(err, idforge.ErrUnavailable) {
					t.Fatalf("Next with the store down and nothing buffered: %v, want ErrUnavailable", err)
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
	}
	if remote {
		calls = append(calls,
			call{"NextN above the server's maximum", func() error { _, err := c.NextN(ctx, "order", MaxCount+1); return err }, idforge.ErrInvalidCount},
			call{"NextN 10^12", func() error { _, err := c.NextN(ctx, "order", 1e12); return err }, idforge.ErrInvalidCount},
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
		"batch too large":   {[]string{"a:1"}, []Option{WithRangeCache(MaxCount+1, 0.2)}},
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
