package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/internal/sqldb/sqlite"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
)

// openSequences opens the configured sources and counters.
func (n *Node) openSequences(ctx context.Context, s Settings) (map[string]idforge.Generator, map[string]idforge.PeriodCounter, error) {
	sources := map[string]idforge.Generator{}
	for _, sc := range s.Sources {
		src, closers, err := openSource(ctx, sc, n.dir.Path(), n.log, n.metrics)
		if err != nil {
			return nil, nil, errctx.In(err, "source %q", sc.Name)
		}
		n.closers = append(n.closers, closers...)
		sources[sc.Name] = src
	}
	counters := map[string]idforge.PeriodCounter{}
	for _, c := range s.Counters {
		counter, closer, err := openCounter(ctx, c, n.dir.Path())
		if err != nil {
			return nil, nil, errctx.In(err, "counter %q", c.Name)
		}
		n.closers = append(n.closers, closer)
		counters[c.Name] = counter
	}
	return sources, counters, nil
}

// openCounter opens one counter: its URL (counterURL) in dataDir.
func openCounter(ctx context.Context, c Counter, dataDir string) (idforge.PeriodCounter, io.Closer, error) {
	raw, err := counterURL(c.URL, c.Name, dataDir)
	if err != nil {
		return nil, nil, err
	}
	counter, err := sequence.OpenCounter(ctx, raw)
	if err != nil {
		return nil, nil, err
	}
	return counter, counter, nil
}

// counterURL is raw, the URL of the counter name, with a relative SQLite
// file made the data directory's (sqlite.InDataDir), and name= and dir= (the
// mark file's directory, <dataDir>/counters) set unless it sets them.
func counterURL(raw, name, dataDir string) (string, error) {
	raw, err := sqlite.InDataDir(raw, dataDir)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: counter %q: %v", idforge.ErrInvalidArgument, name, err)
	}
	q := u.Query()
	if !q.Has("name") {
		q.Set("name", name)
	}
	if !q.Has("dir") {
		q.Set("dir", filepath.Join(dataDir, "counters"))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// openSource opens one source: a URL, a balanced set or a date-packed
// counter (counterURL), each relative SQLite file the data directory's
// (sqlite.InDataDir), then the memory expansion when asked for. It returns
// what to close, first to last. It registers its count of answers
// refused because the counter went back with m (once per name) unless m
// is nil (a check); its status reaches the metrics through
// issuer.Issuer.Sources.
func openSource(ctx context.Context, sc Source, dataDir string, log *slog.Logger, m *metrics.Metrics) (idforge.Generator, []io.Closer, error) {
	var src sequence.Source
	var err error
	if sc.URL, err = sqlite.InDataDir(sc.URL, dataDir); err != nil {
		return nil, nil, err
	}
	sc.Balance = slices.Clone(sc.Balance)
	for i := range sc.Balance {
		if sc.Balance[i], err = sqlite.InDataDir(sc.Balance[i], dataDir); err != nil {
			return nil, nil, err
		}
	}
	if sc.DatePacked != "" {
		var raw string
		if raw, err = counterURL(sc.DatePacked, sc.Name, dataDir); err == nil {
			src, err = sequence.OpenDatePacked(ctx, raw, sc.Bits)
		}
	} else if len(sc.Balance) > 0 {
		var bal *compose.Balanced
		bal, err = compose.OpenBalanced(ctx, sc.Balance, compose.BalancedOptions{
			RescueAfter:   sc.RescueAfter,
			SlowThreshold: sc.SlowThreshold,
			SlowCount:     sc.SlowCount,
			SlowWindow:    sc.SlowWindow,
			Logger:        log,
		})
		if err == nil {
			src = bal
		}
	} else {
		src, err = sequence.Open(ctx, sc.URL)
	}
	if err != nil {
		return nil, nil, err
	}
	if p, ok := src.(interface{ Ping(context.Context) error }); ok {
		if err := p.Ping(ctx); err != nil {
			src.Close()
			return nil, nil, err
		}
	}
	if b, ok := src.(interface{ Backwards() int64 }); ok && m != nil {
		m.ObserveBackwards(sc.Name, b.Backwards)
	}
	if sc.Expand == 0 {
		return src, []io.Closer{src}, nil
	}
	exp, err := compose.NewExpanded(src, compose.ExpandedOptions{MemoryBits: sc.Expand, Logger: log})
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return exp, []io.Closer{exp, src}, nil // stop the prefetcher before its source
}

// keyFormats builds the configured string forms of keys.
func keyFormats(s Settings) (map[string]obfuscate.Format, error) {
	formats := map[string]obfuscate.Format{}
	for _, k := range s.Keys {
		if k.Format == "" {
			continue
		}
		f, err := obfuscate.ParseFormat(k.Format)
		if err != nil {
			return nil, errctx.In(err, "key %q", k.Name)
		}
		if f.Bits() > 0 {
			key, err := secret(k.FormatKey, s.Getenv)
			if err != nil {
				return nil, errctx.In(err, "key %q: format_key", k.Name)
			}
			if f, err = f.WithKey(key); err != nil {
				return nil, errctx.In(err, "key %q", k.Name)
			}
		}
		formats[k.Name] = f
	}
	return formats, nil
}

// secret reads a configured secret: "env:VARNAME" from the environment,
// anything else as written.
func secret(v string, getenv func(string) string) ([]byte, error) {
	name, ok := strings.CutPrefix(v, "env:")
	if !ok {
		return []byte(v), nil
	}
	val := getenv(name)
	if val == "" {
		return nil, fmt.Errorf("%w: environment variable %s is not set", idforge.ErrInvalidArgument, name)
	}
	return []byte(val), nil
}
