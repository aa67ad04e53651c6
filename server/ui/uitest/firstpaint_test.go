package uitest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence/compose"
	_ "github.com/idforge/idforge/sequence/redis" // redis:// sources
)

// TestFirstPaint loads the page at a desktop and a phone size and takes
// a screenshot as soon as it has loaded, without waiting for any poll:
// the tables are already filled from the answers the node embedded,
// among them a balanced source with a member ejected (its Redis server
// stopped), the node's version and its store without the password.
func TestFirstPaint(t *testing.T) {
	a := testsvc.StartRedisServer(t)
	b := testsvc.StartRedisServer(t)
	const q = "?key=ui&max_retries=-1&dial_timeout=300ms&read_timeout=200ms&write_timeout=200ms"
	ctx := context.Background()
	bal, err := compose.OpenBalanced(ctx, []string{a.URL() + q, b.URL() + q}, compose.BalancedOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer bal.Close()
	b.Stop()
	defer b.Continue()
	for bal.Stats()[1].State != compose.Ejected {
		if _, err := bal.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := newNodeWith(t, false, map[string]idforge.Generator{"qj": bal})
	// A retired key, and a serial that drew from it.
	if err := n.iss.CreateKey(ctx, idforge.Key{Name: "old", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	if err := n.iss.CreateSerial(ctx, idforge.Serial{Name: "legacy", Template: "L@{seq:old}"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.iss.NextSerial(ctx, "legacy", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := n.iss.RetireKey(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	browserCtx, problems := browser(t)

	for _, size := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			tab, cancel := chromedp.NewContext(browserCtx)
			defer cancel()
			var opts []chromedp.EmulateViewportOption
			if size.mobile {
				opts = append(opts, chromedp.EmulateMobile)
			}
			if err := chromedp.Do(tab, chromedp.EmulateViewport(size.width, size.height, opts...), chromedp.Navigate(n.srv.URL+"/ui")); err != nil {
				t.Fatal(err)
			}
			// No wait: the screenshot and the DOM right after the load.
			shot, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("the screenshot is not a PNG: %v", err)
			}
			if cfg.Width < int(size.width) || cfg.Height < int(size.height) || len(shot) < 10_000 {
				t.Errorf("screenshot %dx%d, %d bytes: too small for a page with tables", cfg.Width, cfg.Height, len(shot))
			}
			if p := os.Getenv("IDFORGE_UI_SCREENSHOT"); p != "" {
				os.WriteFile(strings.TrimSuffix(p, ".png")+"-"+size.name+".png", shot, 0o644)
			}
			for sel, want := range map[string]string{
				`#keys tr[data-key="order"] td.next`:         "251",
				`#keys tr[data-key="qj"] td.current`:         "source: degraded",
				`#sources tr[data-source="qj"] td.health`:    "degraded",
				`#sources tr[data-source="qj"] td.strategy`:  "balanced",
				`#sources tr[data-source="qj"] td.members`:   "ejected (rescue in",
				`#sources tr[data-source="qj"] td.lasterror`: "error:",
				`#node dd[data-field="version"]`:             "v1.2.3-test",
				`#node dd[data-field="store"]`:               "mysql://idforge:xxxxx@db:3306/idforge",
				`#node dd[data-field="plugins"]`:             "history (keys order)",
				`#node dd[data-field="rejections"]`:          "refuse, log (keys order)",
				`#keys tr[data-key="old"] td.current`:        "retired",
				`#serials tr[data-serial="legacy"] td.state`: "old retired",
				`#store`: "degraded",
			} {
				if got := text(tab, t, sel); !strings.Contains(got, want) {
					t.Errorf("%s shows %q, want it to contain %q", sel, got, want)
				}
			}
			// Nothing wider than the viewport but the tables' own scrolling.
			w, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if w > int(size.width) {
				t.Errorf("the page is %d px wide in a %d px viewport", w, size.width)
			}
			if size.mobile {
				return // a phone scrolls the tables sideways
			}
			// At 1280 px every table fits: no column is cut off behind
			// a sideways scroll.
			over, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".scroll")]
				.filter(e => e.scrollWidth > e.clientWidth)
				.map(e => e.firstElementChild.id + " is " + e.scrollWidth + " px wide in " + e.clientWidth)`))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range over {
				t.Errorf("at %d px the table %s", size.width, o)
			}
		})
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}
