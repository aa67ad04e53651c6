package issuer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/serial"
)

// serialEntry is a compiled serial definition.
type serialEntry struct {
	def   idforge.Serial
	tmpl  *serial.Template
	draws []string // what its seq expressions draw from (not by= ones)
}

// resolveTimeout bounds the store lookups a template makes at parse time,
// within the caller's own deadline.
const resolveTimeout = 5 * time.Second

// Compile parses a serial definition against this node's sources,
// counters and keys, without storing it: `idforge serial check`, and the
// validation before CreateSerial. ctx bounds the store lookups of the keys
// the template names. Errors wrap idforge.ErrInvalidArgument (a
// *serial.SyntaxError names the column), idforge.ErrUnknownKey, or ctx's
// error once ctx is done.
func (i *Issuer) Compile(ctx context.Context, def idforge.Serial) (*serial.Template, error) {
	tmpl, _, err := i.compile(ctx, def)
	return tmpl, err
}

// compile is Compile, also returning the names its seq expressions
// resolved (those it draws from, by= ones aside), failed ones included.
func (i *Issuer) compile(ctx context.Context, def idforge.Serial) (*serial.Template, []string, error) {
	var draws []string
	loc := time.UTC
	if def.TimeZone != "" {
		var err error
		if loc, err = time.LoadLocation(def.TimeZone); err != nil {
			return nil, nil, fmt.Errorf("%w: serial %q: time zone %q: %v", idforge.ErrInvalidArgument, def.Name, def.TimeZone, err)
		}
	}
	var res serial.Resolver = serialResolver{i, &draws}
	if def.Gapless {
		if _, err := i.gaplessStore(def.Name); err != nil {
			return nil, nil, err
		}
		res = gaplessResolver{&draws}
	}
	tmpl, err := serial.Parse(ctx, def.Template, serial.Options{Location: loc, Clock: i.set.Clock, Resolver: res})
	if err == nil && def.Gapless && len(draws) != 1 {
		return nil, nil, fmt.Errorf("%w: serial %q: a gapless template shows its number with exactly one @{seq:NAME} (it has %d)",
			idforge.ErrInvalidArgument, def.Name, len(draws))
	}
	if err != nil && ctx.Err() != nil {
		// The caller gave up while a key the template draws on was being
		// read: that is the answer, not "invalid template".
		return nil, draws, fmt.Errorf("compiling the template: %w", ctx.Err())
	}
	return tmpl, draws, err
}

// resolveSource finds what a template's @{seq:NAME} draws from: a
// configured counter or source, one defined through the API, or a key
// (segment or snowflake).
func (i *Issuer) resolveSource(ctx context.Context, name string) (serial.Source, error) {
	if c, ok := i.set.Counters[name]; ok {
		return serial.Source{Counter: c}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	if c, err := i.definedCounter(ctx, name); c != nil || err != nil {
		return serial.Source{Counter: c}, err
	}
	e, err := i.resolve(ctx, name)
	if err != nil {
		return serial.Source{}, err
	}
	switch {
	case e.alloc != nil:
		// A retired key's allocator refuses by itself, and is a
		// serial.BoundedGenerator.
		return serial.Source{Generator: e.alloc}, nil
	case e.gen == nil:
		return serial.Source{}, nil // a key of strings: the template says so
	}
	return serial.Source{Generator: drawing{e}}, nil
}

// drawing is a key as a serial template draws from it: it stops the
// moment the key is retired, as the key's own requests do.
type drawing struct{ e *entry }

func (d drawing) Next(ctx context.Context) (int64, error) {
	if err := d.e.retiredErr(); err != nil {
		return 0, err
	}
	return d.e.gen.Next(ctx)
}

func (d drawing) NextN(ctx context.Context, n int) ([]int64, error) {
	if err := d.e.retiredErr(); err != nil {
		return nil, err
	}
	return d.e.gen.NextN(ctx, n)
}

// serialResolver is what templates draw from: resolveSource, and, for
// @{seq:NAME,by=PARAM}, createSource.
type serialResolver struct {
	i     *Issuer
	draws *[]string // the names Resolve was asked for
}

func (r serialResolver) Resolve(ctx context.Context, name string) (serial.Source, error) {
	*r.draws = append(*r.draws, name)
	return r.i.resolveSource(ctx, name)
}

// Create returns the source of a counter a template chooses by a
// parameter (NAME-VALUE): a configured counter or source, or a key,
// created as a segment key (DefaultStep, from 1) on first use. The
// template has checked the value against its limits before.
func (r serialResolver) Create(ctx context.Context, name string) (serial.Source, error) {
	src, err := r.i.resolveSource(ctx, name)
	if !errors.Is(err, idforge.ErrUnknownKey) {
		return src, err
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	k := idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: DefaultStep, MaxID: 1,
		Description: "created on first use by a serial template's seq with by="}
	if err := r.i.EnsureKey(ctx, k); err != nil {
		return serial.Source{}, err
	}
	return r.i.resolveSource(ctx, name)
}

// serialDef finds a definition: configuration first, then the store.
func (i *Issuer) serialDef(ctx context.Context, name string) (idforge.Serial, error) {
	for _, d := range i.set.Serials {
		if d.Name == name {
			return d, nil
		}
	}
	ss, ok := i.store.(idforge.SerialStore)
	if !ok {
		return idforge.Serial{}, fmt.Errorf("%w: serial %q", idforge.ErrUnknownKey, name)
	}
	d, err := ss.Serial(ctx, name)
	if err != nil {
		return idforge.Serial{}, storeErr(err)
	}
	return d, nil
}

// template returns the compiled template of a serial, compiling it the
// first time it is asked for.
func (i *Issuer) template(ctx context.Context, name string) (*serialEntry, error) {
	if e, ok := (*i.serials.Load())[name]; ok {
		return e, nil
	}
	if err := idforge.ValidateKeyName(name); err != nil {
		return nil, err
	}
	def, err := i.serialDef(ctx, name)
	if err != nil {
		return nil, err
	}
	tmpl, draws, err := i.compile(ctx, def)
	if err != nil {
		if idforge.IsRetryable(err) {
			// The template is fine; a key it draws on could not be read
			// (the store is down). Say so, not "invalid template": a
			// client fails over on unavailable, never on a bad argument.
			return nil, fmt.Errorf("%w: serial %q: %v", idforge.ErrUnavailable, name, err)
		}
		return nil, fmt.Errorf("serial %q: %w", name, err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	old := *i.serials.Load()
	next := make(map[string]*serialEntry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	e := &serialEntry{def: def, tmpl: tmpl, draws: draws}
	if def.Gapless {
		e.draws = nil // draws on nothing that can be retired
	}
	next[name] = e
	i.serials.Store(&next)
	return e, nil
}

// NextSerial renders n serials of the named definition with the request's
// parameters; fewer (at least one) when a seq's width= runs out within
// the batch, and an error wrapping idforge.ErrSpaceExhausted when not
// even one fits (see serial.Template.NextN).
func (i *Issuer) NextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	if n < 1 || n > idforge.MaxCount {
		return nil, fmt.Errorf("%w: %d (want 1..%d)", idforge.ErrInvalidCount, n, idforge.MaxCount)
	}
	e, err := i.template(ctx, name)
	if err != nil {
		return nil, err
	}
	if e.def.Gapless {
		return nil, fmt.Errorf("%w: serial %q is gapless: reserve a number (POST /v1/serials/%s/reserve, or idforge serial reserve), then commit or void it",
			idforge.ErrWrongStrategy, name, name)
	}
	tmpl := e.tmpl
	if err := checkParams(name, tmpl, params); err != nil {
		return nil, err
	}
	// Serial names are their own namespace; a plugin scoped to "bill"
	// also applies to a serial named bill.
	return i.manyStrings(ctx, name, plugin.StrategySerial, n, func() ([]string, error) {
		if n == 1 {
			s, err := tmpl.Next(ctx, params)
			if err != nil {
				return nil, err
			}
			return []string{s}, nil
		}
		return tmpl.NextN(ctx, n, params)
	})
}

// checkParams refuses a parameter the serial's template does not read,
// as the API refuses what it does not read: a misspelt one would
// otherwise be ignored silently. The error wraps
// idforge.ErrInvalidArgument.
func checkParams(name string, tmpl *serial.Template, params map[string]string) error {
	if len(params) == 0 {
		return nil
	}
	reads := tmpl.Params()
	var unread []string
	for p := range params {
		if !slices.Contains(reads, p) {
			unread = append(unread, p)
		}
	}
	if len(unread) == 0 {
		return nil
	}
	slices.Sort(unread)
	takes := "none"
	if len(reads) > 0 {
		takes = strings.Join(reads, ", ")
	}
	return fmt.Errorf("%w: serial %q reads no parameter %q; its template reads %s", idforge.ErrInvalidArgument, name, unread[0], takes)
}

// CreateSerial checks that a definition compiles on this node and stores
// it, so that every node sharing the store serves it. A name taken in the
// configuration or the store is an error wrapping idforge.ErrKeyExists; a
// store that keeps no serials, one wrapping idforge.ErrInvalidArgument.
func (i *Issuer) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := def.Validate(); err != nil {
		return err
	}
	for _, d := range i.set.Serials {
		if d.Name == def.Name {
			return fmt.Errorf("%w: serial %q is defined in the configuration", idforge.ErrKeyExists, def.Name)
		}
	}
	ss, ok := i.store.(idforge.SerialStore)
	if !ok {
		return fmt.Errorf("%w: this store keeps no serial definitions; declare serials in the configuration", idforge.ErrInvalidArgument)
	}
	if _, err := i.Compile(ctx, def); err != nil {
		return err
	}
	if err := ss.CreateSerial(ctx, def); err != nil {
		return storeErr(err)
	}
	return nil
}

// Serials lists the serial definitions: the configuration's, then the
// store's, sorted by name.
func (i *Issuer) Serials(ctx context.Context) ([]idforge.Serial, error) {
	out := append([]idforge.Serial(nil), i.set.Serials...)
	if ss, ok := i.store.(idforge.SerialStore); ok {
		stored, err := ss.Serials(ctx)
		if err != nil && !errors.Is(err, idforge.ErrInvalidArgument) {
			return nil, storeErr(err)
		}
		out = append(out, stored...)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// SerialState is a serial definition with what this node knows of it.
type SerialState struct {
	idforge.Serial
	// Retired names what the serial draws from (a key, a source or
	// counter defined through the API) that was retired: the serial
	// issues nothing more until its template names something else.
	Retired []string
}

// SerialStates lists the serial definitions (Serials) with their state.
// A serial this node has not compiled yet is compiled to learn what it
// draws from.
func (i *Issuer) SerialStates(ctx context.Context) ([]SerialState, error) {
	defs, err := i.Serials(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SerialState, len(defs))
	for n, d := range defs {
		out[n].Serial = d
		if d.Gapless {
			continue // draws on its own numbers, which cannot be retired
		}
		draws := []string(nil)
		if e, ok := (*i.serials.Load())[d.Name]; ok {
			draws = e.draws
		} else {
			_, draws, _ = i.compile(ctx, d)
		}
		for _, name := range draws {
			if i.isRetired(ctx, name) {
				out[n].Retired = append(out[n].Retired, name)
			}
		}
	}
	return out, nil
}

// isRetired reports whether what a serial draws from under name was
// retired: a source or counter defined through the API, or a key.
func (i *Issuer) isRetired(ctx context.Context, name string) bool {
	if i.set.Definitions != nil {
		for _, kind := range []string{KindSource, KindCounter} {
			if d, err := i.set.Definitions.Defined(ctx, kind, name); err == nil {
				return d.Retired
			}
		}
	}
	if e, ok := i.lookup(name); ok && e.retiredErr() != nil {
		return true
	}
	return i.keyDefOrNone(ctx, name).retired
}

// BatchOf makes a plain generator answer NextN too, by calling Next n
// times; a BatchGenerator is returned as it is.
func BatchOf(g idforge.Generator) idforge.BatchGenerator {
	if b, ok := g.(idforge.BatchGenerator); ok {
		return b
	}
	return batch{g}
}

type batch struct{ idforge.Generator }

func (b batch) NextN(ctx context.Context, n int) ([]int64, error) {
	if err := checkCount(n); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for k := range ids {
		id, err := b.Next(ctx)
		if err != nil {
			return nil, err
		}
		ids[k] = id
	}
	return ids, nil
}
