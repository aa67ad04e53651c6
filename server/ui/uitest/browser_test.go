package uitest

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/server/ui"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// node is a real idforge HTTP server on a memory store, with the admin
// page mounted at /ui.
type node struct {
	iss *issuer.Issuer
	srv *httptest.Server
}

const adminToken = "ui-admin-0123456789abcdef"

func newNode(t *testing.T, withAuth bool) *node {
	t.Helper()
	return newNodeWith(t, withAuth, nil)
}

// newNodeWith is newNode with sequence sources (in the metrics through
// the issuer when they report their status).
func newNodeWith(t *testing.T, withAuth bool, sources map[string]idforge.Generator) *node {
	t.Helper()
	st := memstore.New()
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1, Description: "order numbers"},
		{Name: "waybill", Strategy: idforge.StrategySegment, Step: 500, MaxID: 1000},
		{Name: "idle", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
		{Name: "trace", Strategy: idforge.StrategyUUIDv7},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	gen, err := snowflake.New(snowflake.Settings{Worker: 7, Datacenter: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	chain, err := plugin.BuildChain(plugin.Rejections{Log: true, Keys: []string{"order"}}, plugin.Env{Logger: quiet},
		plugin.Scoped(plugin.NewHistory(quiet, 0), "order"))
	if err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{OnClaim: m.OnClaim}, Sources: sources, Plugins: chain})
	m.Observe(iss)
	mux := http.NewServeMux()
	mux.Handle("/", httpapi.New(iss, httpapi.Options{Logger: quiet, Metrics: m.Handler(),
		Node: httpapi.NodeInfo{Version: "v1.2.3-test", Store: "mysql://idforge:xxxxx@db:3306/idforge"}}))
	// As the idforge command does: the page embeds the API's answers,
	// asked through the same authentication.
	var h http.Handler = mux
	page := ui.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	mux.Handle("/ui", page)
	mux.Handle("/ui/", page)
	if withAuth {
		a, err := auth.New(auth.Config{Tokens: []auth.Token{{Token: adminToken, Role: auth.RoleAdmin}}})
		if err != nil {
			t.Fatal(err)
		}
		h = a.Middleware(mux, nil)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		iss.Close()
		gen.Close()
	})
	n := &node{iss: iss, srv: srv}
	n.issue(t, "order", 250)
	n.issue(t, "waybill", 3)
	n.issue(t, "msg", 5)
	return n
}

func (n *node) issue(t *testing.T, key string, count int) {
	t.Helper()
	if _, err := n.iss.NextN(context.Background(), key, count); err != nil {
		t.Fatal(err)
	}
}

// chromium returns the browser to drive, or skips the test (fails it
// under CI=true) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("IDFORGE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "no Chromium found (looked for $IDFORGE_CHROMIUM, chromium, chromium-browser, google-chrome); install it with apt-get install chromium"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a
// context for its first tab, and a function that reports console errors,
// uncaught exceptions and CSP violations seen so far.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("starting %s: %v", chromium(t), err)
	}
	return ctx, watch(ctx)
}

// watch collects the problems a tab reports: uncaught exceptions, console
// errors and browser log errors such as CSP violations (but not the 401s
// of a node that wants a token).
func watch(ctx context.Context) func() []string {
	var (
		mu       sync.Mutex
		problems []string
	)
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if (m.IsException() || m.Type == chromedp.ConsoleError) && !strings.Contains(m.Text, "401") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// rowsWithData is true once the keys table shows every key, with the
// segment key "order" in use (a next value) and the store's state.
const rowsWithData = `document.body.dataset.loaded === "true" &&
	document.querySelectorAll("#keys tbody tr[data-key]").length >= 4 &&
	/\d/.test(document.querySelector('#keys tr[data-key="order"] td.next').textContent)`

func waitRows() chromedp.Action[bool] {
	return chromedp.Poll[bool](rowsWithData, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

// void drops an action's value, for chromedp.Do.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

func text(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// TestPageInChromium loads the page in a real headless Chromium against a
// real node and checks that the table renders with data, follows the
// node's state, and looks like a page (a screenshot of sane size).
func TestPageInChromium(t *testing.T) {
	n := newNode(t, false)
	ctx, problems := browser(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(n.srv.URL+"/ui"), void(waitRows())); err != nil {
		t.Fatalf("the keys table did not fill: %v (problems: %q)", err, problems())
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#keys tbody tr[data-key]").length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 5 {
		t.Errorf("%d rows, want 5 (order, waybill, idle, msg, trace)", rows)
	}

	// order: 250 of its first segment [1, 1001) used.
	checks := map[string]string{
		`#keys tr[data-key="order"] td.key`:      "order",
		`#keys tr[data-key="order"] td.strategy`: "segment",
		`#keys tr[data-key="order"] td.current`:  "[1, 1,001)",
		`#keys tr[data-key="order"] td.next`:     "251",
		`#keys tr[data-key="waybill"] td.next`:   "1,003",
		`#keys tr[data-key="msg"] td.strategy`:   "snowflake",
		`#snowflake dd[data-field="worker"]`:     "7",
		`#snowflake dd[data-field="datacenter"]`: "2",
		`#store`:                                 "ready",
	}
	for sel, want := range checks {
		if got := text(ctx, t, sel); !strings.HasPrefix(got, want) {
			t.Errorf("%s shows %q, want %q", sel, got, want)
		}
	}
	for sel, wantIn := range map[string]string{
		`#keys tr[data-key="order"] td.key`:    "order numbers", // the description
		`#keys tr[data-key="order"] td.step`:   "stored 1,000",
		`#keys tr[data-key="order"] td.left`:   " s",
		`#keys tr[data-key="idle"] td.current`: "not used on this node",
		// Each strategy says where its values come from.
		`#keys tr[data-key="msg"] td.current`:   "the node's generator, below",
		`#keys tr[data-key="trace"] td.current`: "time and random bits, made on each request",
		`#snowflake dd[data-field="layout"]`:    "time:41,datacenter:5,worker:5,sequence:12",
		`#snowflake dd[data-field="expires"]`:   "2080-07-10",
		`#snowflake dd[data-field="lease"]`:     "unlimited",
		// The node's clock against the browser's: both are this machine's.
		`#snowflake dd[data-field="clock offset"]`: " ms against this browser",
	} {
		if got := text(ctx, t, sel); !strings.Contains(got, wantIn) {
			t.Errorf("%s shows %q, want it to contain %q", sel, got, wantIn)
		}
	}
	if got := text(ctx, t, `#keys tr[data-key="order"] td.rate`); !strings.ContainsAny(got, "0123456789") {
		t.Errorf("order's rate shows %q; want a number from /metrics", got)
	}

	// The page follows the node: more IDs, and within a poll or two the
	// next value moves on.
	n.issue(t, "order", 100)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#keys tr[data-key="order"] td.next').textContent === "351"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("the next value did not move to 351: %v (shows %q)", err, text(ctx, t, `#keys tr[data-key="order"] td.next`))
	}

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if cfg.Width < 800 || cfg.Height < 400 || len(shot) < 10_000 {
		t.Errorf("screenshot %dx%d, %d bytes: too small for a page with a table", cfg.Width, cfg.Height, len(shot))
	}
	if p := os.Getenv("IDFORGE_UI_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			t.Error(err)
		}
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// TestPageWithToken checks the page against a node that needs a token:
// without one it asks for it, and ?token= works and leaves the address bar.
func TestPageWithToken(t *testing.T) {
	n := newNode(t, true)
	ctx, _ := browser(t)

	// No token: the page shows the token form; typing the token fills the table.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(n.srv.URL+"/ui"),
		chromedp.WaitVisible(chromedp.CSS("#tokenform")),
	); err != nil {
		t.Fatalf("no token form: %v", err)
	}
	if got := text(ctx, t, "#error"); !strings.Contains(got, "token") {
		t.Errorf("error line %q does not ask for a token", got)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Click(chromedp.CSS("#tokenform button")),
		void(waitRows()),
	); err != nil {
		t.Fatalf("after typing the token: %v", err)
	}

	// ?token= in a new tab (its own sessionStorage).
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(n.srv.URL+"/ui?token="+adminToken), void(waitRows())); err != nil {
		t.Fatalf("with ?token=: %v", err)
	}
	loc, err := chromedp.Run(tab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, adminToken) {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	if got := text(tab, t, `#keys tr[data-key="order"] td.next`); got != "251" {
		t.Errorf("order's next value shows %q", got)
	}
}
