package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/verify"
)

// verifyMemoryLimit is the soft memory limit of a verify run.
const verifyMemoryLimit = 2 << 30

// repeatedFlag collects a repeated flag's values.
type repeatedFlag []string

func (l *repeatedFlag) String() string     { return strings.Join(*l, ",") }
func (l *repeatedFlag) Set(v string) error { *l = append(*l, v); return nil }

// errViolations is cmdVerify's failure when a check failed: the report
// already says what, so the error adds one line.
var errViolations = errors.New("verify: the cluster broke a guarantee (see the report)")

// cmdVerify drives the nodes at the URLs with concurrent clients and
// checks what they answer (package verify).
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("verify", stderr)
	var segments, snowflakes, serials, templates repeatedFlag
	fs.Var(&segments, "segment", "a segment key to verify (repeatable)")
	fs.Var(&snowflakes, "snowflake", "a snowflake key to verify (repeatable)")
	fs.Var(&serials, "serial", "a serial definition to verify (repeatable)")
	params := paramFlags{}
	fs.Var(params, "param", "a serial template parameter, NAME=VALUE (repeatable; for every --serial)")
	fs.Var(&templates, "template", "NAME=TEMPLATE: check serial NAME against TEMPLATE (default: its definition, read over HTTP; needed over gRPC)")
	useGRPC := fs.Bool("grpc", false, "the URLs are gRPC addresses (host:port)")
	useTLS := fs.Bool("tls", false, "talk TLS (system roots) to host:port addresses")
	token := fs.String("token", "", "bearer token (default: IDFORGE_TOKEN, else IDFORGE_ISSUE_TOKEN)")
	duration := fs.Duration("duration", 10*time.Second, "how long to run (0: until --count)")
	count := fs.Int64("count", 0, "stop after this many values (0: no limit)")
	clients := fs.Int("clients", 2, "concurrent clients per node and key")
	batch := fs.Int("batch", 10, "values per request")
	maxSkew := fs.Duration("max-skew", verify.DefaultMaxSkew, "how far a snowflake ID's time may be from the verifier's clock")
	examples := fs.Int("examples", 5, "violations shown per key")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	progress := fs.Bool("progress", false, "show progress on stderr even when it is not a terminal")
	urls, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(urls) == 0:
		return usageErr("verify takes the URLs of the nodes to verify, e.g. idforge verify --segment order http://10.0.0.1:8080 http://10.0.0.2:8080")
	case len(segments)+len(snowflakes)+len(serials) == 0:
		return usageErr("verify needs something to ask for: --segment KEY, --snowflake KEY or --serial NAME")
	case *duration < 0 || *count < 0 || (*duration == 0 && *count == 0):
		return usageErr("give a positive --duration or --count")
	case *clients < 1 || *clients > 256:
		return usageErr("--clients %d: want 1..256", *clients)
	case *batch < 1 || *batch > idforge.MaxCount:
		return usageErr("--batch %d: want 1..%d", *batch, idforge.MaxCount)
	case *maxSkew <= 0:
		return usageErr("--max-skew must be positive")
	}
	tmpl := map[string]string{}
	for _, t := range templates {
		name, text, ok := strings.Cut(t, "=")
		if !ok || name == "" {
			return usageErr("--template %q: want NAME=TEMPLATE", t)
		}
		tmpl[name] = text
	}
	tok := tokenFrom(*token, getenv)

	var targets []verify.Target
	for _, k := range segments {
		targets = append(targets, verify.Target{Name: k, Kind: verify.Segment})
	}
	for _, k := range snowflakes {
		targets = append(targets, verify.Target{Name: k, Kind: verify.Snowflake})
	}
	for _, name := range serials {
		t := verify.Target{Name: name, Kind: verify.Serial, Params: params}
		if text, ok := tmpl[name]; ok {
			t.Template = text
		} else if *useGRPC {
			return usageErr("--serial %s over gRPC needs --template %s=TEMPLATE: gRPC does not serve serial definitions", name, name)
		} else if t.Template, t.TimeZone, err = serialDefinition(ctx, nodeURL(urls[0], *useTLS), name, tok); err != nil {
			return err
		}
		targets = append(targets, t)
	}

	opts := []client.Option{client.WithRetries(0), client.WithToken(tok)}
	if *useTLS {
		opts = append(opts, client.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	var nodes []verify.Node
	defer func() {
		for _, n := range nodes {
			n.Client.Close()
		}
	}()
	for _, u := range urls {
		var c client.Client
		if *useGRPC {
			c, err = client.NewGRPC([]string{u}, opts...)
		} else {
			c, err = client.NewHTTP([]string{u}, opts...)
		}
		if err != nil {
			return usageError{err}
		}
		nodes = append(nodes, verify.Node{Name: u, Client: c})
	}
	cfg := verify.Config{Nodes: nodes, Targets: targets, Clients: *clients, Batch: *batch,
		Duration: *duration, Count: *count, MaxSkew: *maxSkew, Examples: *examples}
	if *progress || isTerminal(stderr) {
		bar := &progressBar{w: stderr}
		cfg.Progress = bar.show
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// The sets of seen values only grow, and each table they outgrow
		// is garbage: a soft limit has the collector return it before
		// the heap doubles, so 100 million IDs verify within it
		// (BENCHMARKS.md). GOMEMLIMIT, read by the runtime, wins.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(verifyMemoryLimit))
	}
	r, err := verify.Run(ctx, cfg)
	if err != nil {
		return exitErr(err)
	}
	if cfg.Progress != nil {
		fmt.Fprintln(stderr) // end the bar's line
	}
	if *asJSON {
		enc := strictjson.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else if err := r.WriteText(stdout); err != nil {
		return err
	}
	if !r.Passed {
		if r.Values == 0 {
			return errors.New("verify: no node answered a single value")
		}
		return errViolations
	}
	return nil
}

// serialDefinition reads serial name's template and time zone from the
// node at base (GET /v1/serials).
func serialDefinition(ctx context.Context, base, name, token string) (string, string, error) {
	var answer struct {
		Serials []struct {
			Name     string `json:"name"`
			Template string `json:"template"`
			TimeZone string `json:"time_zone"`
		} `json:"serials"`
	}
	if err := httpwire.Get(ctx, base, "/v1/serials", token, &answer); err != nil {
		return "", "", fmt.Errorf("reading the definition of serial %q: %w", name, err)
	}
	for _, s := range answer.Serials {
		if s.Name == name {
			return s.Template, s.TimeZone, nil
		}
	}
	return "", "", fmt.Errorf("%w: serial %q is not defined on %s", idforge.ErrUnknownKey, name, base)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a run's progress on one line, redrawn in place.
type progressBar struct{ w io.Writer }

const barWidth = 24

func (b *progressBar) show(p verify.Progress) {
	done := 0.0
	if p.Duration > 0 {
		done = p.Elapsed.Seconds() / p.Duration.Seconds()
	}
	if p.Count > 0 {
		done = max(done, float64(p.Values)/float64(p.Count))
	}
	done = min(done, 1)
	filled := int(done * barWidth)
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Values) / s
	}
	fmt.Fprintf(b.w, "\r[%s%s] %3.0f%%  %d values  %.0f/s  %d errors  %d violations ",
		strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), done*100, p.Values, rate, p.Errors, p.Violations)
}
