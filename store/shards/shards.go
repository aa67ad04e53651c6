package shards

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/rotate"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/store"
)

// DefaultRescue is how long a failing database is left aside.
const DefaultRescue = 5 * time.Second

// The definition each database records its place in the set under.
const (
	Kind = "shards"
	Name = "set"
)

func init() {
	for _, inner := range []string{"mysql", "postgres", "sqlite"} {
		form := "shards+" + inner + "://user:password@host1/db?also=host2:port/db"
		if inner == "sqlite" {
			form = "shards+sqlite:///path/a.db?also=/path/b.db"
		}
		store.Register(store.Scheme{Name: "shards+" + inner, Form: form, Doc: "Tinyid's independent databases"}, openURL)
	}
}

// Config is what a database records about its set (the definition's Spec).
type Config struct {
	Databases int    `json:"databases"`
	Position  int    `json:"position"`
	Set       string `json:"set"`
}

// Store is a segment store over N independent databases. It is safe for
// concurrent use.
type Store struct {
	opts    store.Options
	members []*member
	rotor   *rotate.Rotor

	mu     sync.Mutex
	set    string // the set's identifier, once a database said it
	keys   map[string]*turn
	closed bool
}

// turn is a key's place in the round: the next database to claim from,
// and the end of the highest block handed out.
type turn struct{ next, high int64 }

type member struct {
	url, where string
	mu         sync.Mutex
	st         store.Backend
}

var (
	_ idforge.Store           = (*Store)(nil)
	_ idforge.Migrator        = (*Store)(nil)
	_ sequence.StatusReporter = (*Store)(nil)
)

// openURL is the store.Opener of the shards+ schemes.
func openURL(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
	q := dsn.NewQuery(u, "shards URL")
	also := q.List("also")
	rescue := q.Duration("rescue", DefaultRescue, time.Millisecond)
	if err := q.Err(); err != nil {
		return nil, err
	}
	inner := sqldb.StripScheme(u)
	inner.RawQuery = q.Rest().Encode()
	places, err := sqldb.Places(inner, also)
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	s := &Store{opts: opts, rotor: rotate.New("shards store", len(places), rescue), keys: map[string]*turn{}}
	for _, p := range places {
		c := *p
		c.RawQuery = ""
		s.members = append(s.members, &member{url: p.String(), where: dsn.Redacted(&c)})
	}
	errs := make([]error, len(s.members))
	for i := range s.members {
		_, errs[i] = s.db(ctx, i)
		if errors.Is(errs[i], idforge.ErrInvalidArgument) {
			s.Close()
			return nil, errs[i]
		}
		s.rotor.Observe(i, errs[i])
	}
	if err := s.any(errs); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// db returns database i's store, opening it and checking its place in
// the set on first use.
func (s *Store) db(ctx context.Context, i int) (store.Backend, error) {
	m := s.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st != nil {
		return m.st, nil
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("shards store: %w", idforge.ErrClosed)
	}
	st, err := store.Open(ctx, m.url, s.opts)
	if err != nil {
		return nil, fmt.Errorf("database %d (%s): %w", i, m.where, err)
	}
	b, ok := st.(store.Backend)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("%w: database %s: its store cannot be a shard", idforge.ErrInvalidArgument, m.where)
	}
	if !s.opts.ForMigrate {
		if err := s.check(ctx, i, b); err != nil {
			b.Close()
			return nil, err
		}
	}
	m.st = b
	return b, nil
}

// check refuses database i unless it records position i of a set of
// len(members), the same set as the others.
func (s *Store) check(ctx context.Context, i int, b store.Backend) error {
	c, err := readConfig(ctx, b)
	where, n := s.members[i].where, len(s.members)
	switch {
	case errors.Is(err, idforge.ErrUnknownKey):
		return fmt.Errorf("%w: database %s belongs to no set: run `idforge migrate` with this URL on empty databases", idforge.ErrInvalidArgument, where)
	case err != nil:
		return fmt.Errorf("database %d (%s): %w", i, where, err)
	case c.Databases != n:
		return fmt.Errorf("%w: database %s belongs to a set of %d databases, the URL lists %d: %s", idforge.ErrInvalidArgument, where, c.Databases, n, growth)
	case c.Position != i:
		return fmt.Errorf("%w: database %s is number %d of its set, the URL lists it as %d: list the databases in their order", idforge.ErrInvalidArgument, where, c.Position, i)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == "" {
		s.set = c.Set
	} else if s.set != c.Set {
		return fmt.Errorf("%w: database %s belongs to set %s, the others to %s: a URL lists the databases of one set", idforge.ErrInvalidArgument, where, c.Set, s.set)
	}
	return nil
}

// growth is why a set keeps its number of databases.
const growth = "a set keeps the number of databases it was made with, which every key's residues depend on; to grow it, move the keys to a new set (docs/engines.md, \"Independent databases\")"

func readConfig(ctx context.Context, b store.Backend) (Config, error) {
	var c Config
	d, err := b.Definition(ctx, Kind, Name)
	if err == nil {
		err = json.Unmarshal([]byte(d.Spec), &c)
	}
	return c, err
}

// each calls fn on every database at once and returns their errors, by
// position; a database that fails is set aside.
func (s *Store) each(ctx context.Context, fn func(ctx context.Context, i int, b store.Backend) error) []error {
	return s.on(ctx, nil, fn)
}

// errAside stands for a database a read leaves out.
var errAside = fmt.Errorf("%w: set aside after a failure", idforge.ErrUnavailable)

// some is each for a read: the databases set aside after a failure are
// left out, unless all are, so that one that hangs costs a read its
// timeout once per rescue time rather than every time.
func (s *Store) some(ctx context.Context, fn func(ctx context.Context, i int, b store.Backend) error) []error {
	aside, all := make([]bool, len(s.members)), true
	for i := range aside {
		aside[i] = s.rotor.Aside(i)
		all = all && aside[i]
	}
	if all {
		aside = nil
	}
	return s.on(ctx, aside, fn)
}

// on is each but for the databases skip marks.
func (s *Store) on(ctx context.Context, skip []bool, fn func(ctx context.Context, i int, b store.Backend) error) []error {
	errs := make([]error, len(s.members))
	var wg sync.WaitGroup
	for i := range s.members {
		if skip != nil && skip[i] {
			errs[i] = errAside
			continue
		}
		wg.Go(func() {
			b, err := s.db(ctx, i)
			if err == nil {
				err = fn(ctx, i, b)
			}
			if !answered(err) && ctx.Err() == nil {
				s.rotor.Observe(i, err)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

// answered reports whether err is nil or a database's answer about what
// was asked, not its failure.
func answered(err error) bool {
	for _, e := range []error{nil, idforge.ErrInvalidArgument, idforge.ErrUnknownKey, idforge.ErrKeyExists, idforge.ErrRetired} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// write runs fn on every database, which must all answer: first on
// database 0, which decides between writers of one name, then on the
// others, where a name taken already (by an earlier write that failed
// part-way) is no error.
func (s *Store) write(ctx context.Context, what string, fn func(ctx context.Context, i int, b store.Backend) error) error {
	if err := s.all(what, s.each(ctx, func(ctx context.Context, _ int, b store.Backend) error { return b.Ping(ctx) })); err != nil {
		return err
	}
	b, err := s.db(ctx, 0)
	if err == nil {
		err = fn(ctx, 0, b)
	}
	if err != nil {
		return err
	}
	errs := s.each(ctx, func(ctx context.Context, i int, b store.Backend) error {
		if i == 0 {
			return nil
		}
		if err := fn(ctx, i, b); !errors.Is(err, idforge.ErrKeyExists) {
			return err
		}
		return nil
	})
	if err := s.all(what, errs); err != nil {
		return fmt.Errorf("%s is done in some databases only: %w", what, err)
	}
	return nil
}

// read returns what the first database that answers says.
func read[T any](ctx context.Context, s *Store, fn func(ctx context.Context, b store.Backend) (T, error)) (T, error) {
	vals := make([]T, len(s.members))
	errs := s.some(ctx, func(ctx context.Context, i int, b store.Backend) (err error) {
		vals[i], err = fn(ctx, b)
		return err
	})
	for i, err := range errs {
		if err == nil {
			return vals[i], nil
		}
	}
	var zero T
	return zero, s.anyKeyErr(errs)
}

// all returns nil when every error is nil, else them joined, wrapping
// idforge.ErrUnavailable unless one wraps ErrInvalidArgument.
func (s *Store) all(what string, errs []error) error {
	var out []error
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("database %d: %w", i, err))
		}
	}
	err := errors.Join(out...)
	if err == nil || errors.Is(err, idforge.ErrInvalidArgument) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: shards store: %s needs every database: %w", idforge.ErrUnavailable, what, err)
}

// any returns nil when some error is nil, else them joined, wrapping
// idforge.ErrUnavailable.
func (s *Store) any(errs []error) error {
	if slices.Contains(errs, nil) {
		return nil
	}
	return fmt.Errorf("%w: shards store: no database answers: %w", idforge.ErrUnavailable, errors.Join(errs...))
}

// Ping pings every database and succeeds when one answers: the set
// issues while one does. Status says which do not.
func (s *Store) Ping(ctx context.Context) error {
	return s.any(s.some(ctx, func(ctx context.Context, _ int, b store.Backend) error { return b.Ping(ctx) }))
}

// Status reports each database: admitted, or set aside with its error.
// It is Degraded, never Down, when every database is set aside: a node
// weighs the store's outage against its buffers (Ping).
func (s *Store) Status() sequence.Status {
	st := s.rotor.Status("shards", func(i int) string { return s.members[i].where }, nil)
	if st.Health == sequence.Down {
		st.Health = sequence.Degraded
	}
	return st
}

// Migrate creates the tables in every database and records each one's
// place in the set, choosing the set's identifier, unless they record it
// already. It refuses databases of another set or size, and a set made
// of databases that hold keys already.
func (s *Store) Migrate(ctx context.Context) error {
	cfgs := make([]Config, len(s.members))
	keys := make([]int, len(s.members))
	err := s.all("migrate", s.each(ctx, func(ctx context.Context, i int, b store.Backend) error {
		if err := b.Migrate(ctx); err != nil {
			return err
		}
		ks, err := b.Keys(ctx)
		keys[i] = len(ks)
		if err != nil {
			return err
		}
		cfgs[i], err = readConfig(ctx, b)
		if errors.Is(err, idforge.ErrUnknownKey) {
			return nil
		}
		return err
	}))
	if err != nil {
		return err
	}
	set := ""
	for i, c := range cfgs {
		if c.Set == "" {
			if keys[i] > 0 {
				return fmt.Errorf("%w: database %s holds keys but belongs to no set: a set starts from empty databases; %s", idforge.ErrInvalidArgument, s.members[i].where, growth)
			}
			continue
		}
		if set == "" {
			set = c.Set
		}
		if err := s.check(ctx, i, s.members[i].st); err != nil {
			return err
		}
	}
	if set != "" {
		for i, c := range cfgs {
			if c.Set == "" {
				return fmt.Errorf("%w: database %s belongs to no set, the others to %s: %s", idforge.ErrInvalidArgument, s.members[i].where, set, growth)
			}
		}
		return nil
	}
	var id [8]byte
	rand.Read(id[:])
	set = hex.EncodeToString(id[:])
	// Database 0 first: of two migrations at once, one sets up the set.
	return s.write(ctx, "recording the set", func(ctx context.Context, i int, b store.Backend) error {
		spec, _ := json.Marshal(Config{Databases: len(s.members), Position: i, Set: set})
		return b.CreateDefinition(ctx, idforge.Definition{Kind: Kind, Name: Name, Spec: string(spec),
			Description: fmt.Sprintf("database %d of a set of %d (Tinyid's independent databases)", i, len(s.members))})
	})
}

// CreateKey creates the key in every database, which must all answer:
// first in database 0, which decides between creators of one name, then
// in the others. A segment key's row in database i starts at
// MaxID + i·Step and steps by Step·N.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	n := int64(len(s.members))
	seg := k.Strategy == idforge.StrategySegment
	if seg && (k.Step > idforge.MaxStep/n || k.MaxID > math.MaxInt64-(n-1)*k.Step) {
		return fmt.Errorf("%w: key %q: step %d × %d databases does not fit a stored step", idforge.ErrInvalidArgument, k.Name, k.Step, n)
	}
	return s.write(ctx, "creating key "+k.Name, func(ctx context.Context, i int, b store.Backend) error {
		r := k
		if seg {
			r.MaxID, r.Step = k.MaxID+int64(i)*k.Step, k.Step*n
		}
		return b.CreateKey(ctx, r)
	})
}

// view turns database rows into the set's key: the lowest max_id, the
// block as step.
func (s *Store) view(rows []idforge.Key) idforge.Key {
	k := rows[0]
	for _, r := range rows[1:] {
		k.MaxID = min(k.MaxID, r.MaxID)
	}
	if k.Strategy == idforge.StrategySegment {
		k.Step /= int64(len(s.members))
	}
	return k
}

// Key returns the key as the databases that answer hold it.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	rows := make([]idforge.Key, len(s.members))
	errs := s.some(ctx, func(ctx context.Context, i int, b store.Backend) (err error) {
		rows[i], err = b.Key(ctx, name)
		return err
	})
	var found []idforge.Key
	for i, err := range errs {
		if err == nil {
			found = append(found, rows[i])
		}
	}
	if len(found) == 0 {
		return idforge.Key{}, s.anyKeyErr(errs)
	}
	return s.view(found), nil
}

// anyKeyErr is the error of a read no database served: unknown key when
// every database that answered lacks it.
func (s *Store) anyKeyErr(errs []error) error {
	for _, err := range errs {
		if errors.Is(err, idforge.ErrUnknownKey) {
			return err
		}
	}
	return s.any(errs)
}

// Keys returns every key any answering database holds, sorted by name.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	lists := make([][]idforge.Key, len(s.members))
	errs := s.some(ctx, func(ctx context.Context, i int, b store.Backend) (err error) {
		lists[i], err = b.Keys(ctx)
		return err
	})
	if err := s.any(errs); err != nil {
		return nil, err
	}
	byName := map[string][]idforge.Key{}
	for _, l := range lists {
		for _, k := range l {
			byName[k.Name] = append(byName[k.Name], k)
		}
	}
	out := make([]idforge.Key, 0, len(byName))
	for _, rows := range byName {
		out = append(out, s.view(rows))
	}
	slices.SortFunc(out, func(a, b idforge.Key) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ClaimSegment claims one block of the key from the next database that
// answers; step is ignored but for its sign. A database without the key
// is passed over.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if step < 0 {
		return idforge.Segment{}, fmt.Errorf("%w: negative step %d", idforge.ErrInvalidArgument, step)
	}
	if err := ctx.Err(); err != nil {
		return idforge.Segment{}, err // takes no database's turn
	}
	s.mu.Lock()
	kt := s.keys[key]
	if kt == nil {
		kt = &turn{}
		s.keys[key] = kt
	}
	kt.next++
	start := kt.next - 1
	s.mu.Unlock()
	var seg idforge.Segment
	failing := false
	err := s.rotor.DoFrom(ctx, uint64(start), func(ctx context.Context, i int) (err error) {
		seg, err = s.claim(ctx, i, key, kt)
		if errors.Is(err, idforge.ErrUnknownKey) || errors.Is(err, idforge.ErrSpaceExhausted) {
			return rotate.Pass(err)
		}
		failing = failing || err != nil
		return err
	})
	switch {
	case err == nil:
		return seg, nil
	case ctx.Err() != nil || !failing && (errors.Is(err, idforge.ErrUnknownKey) || errors.Is(err, idforge.ErrSpaceExhausted)):
		return seg, err
	}
	return seg, fmt.Errorf("%w: shards store: %w", idforge.ErrUnavailable, err)
}

// claim claims a block of key from database i, above every block the
// store handed out of it.
func (s *Store) claim(ctx context.Context, i int, key string, kt *turn) (idforge.Segment, error) {
	b, err := s.db(ctx, i)
	if err != nil {
		return idforge.Segment{}, err
	}
	n := int64(len(s.members))
	s.mu.Lock()
	high := kt.high
	s.mu.Unlock()
	var ask, stored int64 // the first claim takes the stored step S·N
	for {
		row, err := b.ClaimSegment(ctx, key, ask)
		if err != nil {
			return row, err
		}
		// A claim of a given size may not report the stored step (MySQL
		// reads it after the claim, and that read can fail): the first
		// claim's stands.
		row.Step = cmp.Or(row.Step, stored)
		stored = row.Step
		if row.Step <= 0 || row.Step%n != 0 {
			return row, fmt.Errorf("%w: key %q in database %s steps by %d, not a multiple of %d databases: it was not created through this set", idforge.ErrInvalidArgument, key, s.members[i].where, row.Step, n)
		}
		// The block is the first S of the last S·N of the row's claim
		// (a multiple of S·N long).
		block := row.Step / n
		seg := idforge.Segment{Start: row.End - row.Step, Step: block}
		seg.End = seg.Start + block
		if seg.Start >= high {
			s.mu.Lock()
			kt.high = max(kt.high, seg.End)
			kt.next = int64(i) + 1 // the database after this one goes next
			s.mu.Unlock()
			return seg, nil
		}
		// Behind a block handed out before: skip ahead in one claim.
		behind := (high - row.End + row.Step - 1) / row.Step
		if behind > (math.MaxInt64-row.End)/row.Step-1 {
			return seg, fmt.Errorf("%w: key %q", idforge.ErrSpaceExhausted, key)
		}
		ask = (behind + 1) * row.Step
	}
}

// CreateSerial stores the definition in every database.
func (s *Store) CreateSerial(ctx context.Context, d idforge.Serial) error {
	return s.write(ctx, "creating serial "+d.Name, func(ctx context.Context, _ int, b store.Backend) error { return b.CreateSerial(ctx, d) })
}

// Serial reads a definition from the first database that answers.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	return read(ctx, s, func(ctx context.Context, b store.Backend) (idforge.Serial, error) { return b.Serial(ctx, name) })
}

// Serials reads the definitions from the first database that answers.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	return read(ctx, s, func(ctx context.Context, b store.Backend) ([]idforge.Serial, error) { return b.Serials(ctx) })
}

// CreateDefinition stores the definition in every database.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	return s.write(ctx, "creating definition "+d.Name, func(ctx context.Context, _ int, b store.Backend) error { return b.CreateDefinition(ctx, d) })
}

// UpdateDefinition changes the definition in every database.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	return s.write(ctx, "updating definition "+d.Name, func(ctx context.Context, _ int, b store.Backend) error { return b.UpdateDefinition(ctx, d) })
}

// RetireDefinition retires the definition in every database.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	return s.write(ctx, "retiring definition "+name, func(ctx context.Context, _ int, b store.Backend) error { return b.RetireDefinition(ctx, kind, name) })
}

// Definition reads a definition from the first database that answers.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	return read(ctx, s, func(ctx context.Context, b store.Backend) (idforge.Definition, error) {
		return b.Definition(ctx, kind, name)
	})
}

// Definitions reads the definitions of kind from the first database that
// answers.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	return read(ctx, s, func(ctx context.Context, b store.Backend) ([]idforge.Definition, error) {
		return b.Definitions(ctx, kind)
	})
}

// Close closes every database's store. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var errs []error
	for _, m := range s.members {
		m.mu.Lock()
		if m.st != nil {
			errs = append(errs, m.st.Close())
		}
		m.mu.Unlock()
	}
	return errors.Join(errs...)
}
