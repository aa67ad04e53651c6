package node

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
)

// openSequences opens the configured sources and counters.
func (n *Node) openSequences(ctx context.Context, s Settings) (map[string]idforge.Generator, map[string]idforge.PeriodCounter, error) {
	sources := map[string]idforge.Generator{}
	for _, sc := range s.Sources {
		src, err := n.openSource(ctx, sc)
		if err != nil {
			return nil, nil, errctx.In(err, "source %q", sc.Name)
		}
		sources[sc.Name] = src
		n.observeSource(sc.Name, src)
	}
	counters := map[string]idforge.PeriodCounter{}
	for _, c := range s.Counters {
		u, err := url.Parse(c.URL)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: counter %q: %v", idforge.ErrInvalidArgument, c.Name, err)
		}
		q := u.Query()
		if !q.Has("name") {
			q.Set("name", c.Name)
		}
		if !q.Has("dir") {
			q.Set("dir", n.dir.File("counters"))
		}
		u.RawQuery = q.Encode()
		counter, err := sequence.OpenCounter(ctx, u.String())
		if err != nil {
			return nil, nil, errctx.In(err, "counter %q", c.Name)
		}
		n.closers = append(n.closers, counter)
		counters[c.Name] = counter
	}
	return sources, counters, nil
}

// openSource opens one configured source: a URL, or a balanced set, then
// the memory expansion when asked for.
func (n *Node) openSource(ctx context.Context, sc Source) (idforge.Generator, error) {
	var src sequence.Source
	var err error
	if len(sc.Balance) > 0 {
		var bal *compose.Balanced
		bal, err = compose.OpenBalanced(ctx, sc.Balance, compose.BalancedOptions{
			RescueAfter:   sc.RescueAfter,
			SlowThreshold: sc.SlowThreshold,
			SlowCount:     sc.SlowCount,
			SlowWindow:    sc.SlowWindow,
			Logger:        n.log,
		})
		if err == nil {
			src = bal
		}
	} else {
		src, err = sequence.Open(ctx, sc.URL)
	}
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, src)
	if b, ok := src.(interface{ Backwards() int64 }); ok {
		n.metrics.ObserveBackwards(sc.Name, b.Backwards)
	}
	if sc.Expand == 0 {
		return src, nil
	}
	exp, err := compose.NewExpanded(src, compose.ExpandedOptions{MemoryBits: sc.Expand, Logger: n.log})
	if err != nil {
		return nil, err
	}
	n.closers = append([]io.Closer{exp}, n.closers...) // stop the prefetcher before its source
	return exp, nil
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
