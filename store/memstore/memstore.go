// Package memstore is an in-memory idforge.Store for tests and examples.
//
// It keeps nothing across restarts, so it must NEVER be used to issue IDs
// that outlive the process: a restart would hand the same numbers out again.
// Fail lets a test make every call fail, to exercise outage handling.
package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/claim"
)

// Store is an in-memory idforge.Store. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	keys    map[string]idforge.Key
	serials map[string]idforge.Serial
	// defs holds definitions by "<kind>\x00<name>".
	defs   map[string]idforge.Definition
	fail   error
	closed bool
	claims int
}

var (
	_ idforge.Store           = (*Store)(nil)
	_ idforge.SegmentReturner = (*Store)(nil)
	_ idforge.SerialStore     = (*Store)(nil)
	_ idforge.DefinitionStore = (*Store)(nil)
	_ idforge.KeyUpdater      = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{keys: make(map[string]idforge.Key), serials: make(map[string]idforge.Serial), defs: make(map[string]idforge.Definition)}
}

// Fail makes every later call return err (until Fail(nil)).
func (s *Store) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// Delete removes a key, as an operator deleting its row would.
func (s *Store) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, name)
}

// Claims returns how many segments have been claimed successfully.
func (s *Store) Claims() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims
}

func (s *Store) check() error {
	if s.closed {
		return idforge.ErrClosed
	}
	return s.fail
}

// ClaimSegment implements idforge.SegmentStore.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if err := ctx.Err(); err != nil {
		return idforge.Segment{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return idforge.Segment{}, err
	}
	k, err := s.segmentKey(key)
	if err != nil {
		return idforge.Segment{}, err
	}
	if err := cmp.Or(claim.CheckStep(key, step), claim.Unclaimable(key, k.MaxID, k.Step, step)); err != nil {
		return idforge.Segment{}, err
	}
	k.MaxID += cmp.Or(step, k.Step)
	seg := claim.Claimed(k.MaxID, k.Step, step)
	k.Updated = time.Now()
	s.keys[key] = k
	s.claims++
	return seg, nil
}

// segmentKey returns the segment key of that name, under the lock.
func (s *Store) segmentKey(key string) (idforge.Key, error) {
	k, ok := s.keys[key]
	if !ok || k.Strategy != idforge.StrategySegment {
		return k, claim.NotSegmentKey(key, string(k.Strategy))
	}
	return k, nil
}

// ReturnSegment implements idforge.SegmentReturner.
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	if err := claim.CheckReturn(key, from, to); err != nil {
		return false, err
	}
	k, err := s.segmentKey(key)
	if err != nil {
		return false, err
	}
	if k.MaxID != to {
		return false, nil
	}
	k.MaxID = from
	s.keys[key] = k
	return true, nil
}

// CreateKey implements idforge.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	k.Updated = time.Now()
	return put(s, s.keys, k.Name, strconv.Quote(k.Name), k)
}

// Key implements idforge.KeyStore.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	return get(s, s.keys, name, strconv.Quote(name))
}

// Keys implements idforge.KeyStore.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	return list(s, s.keys)
}

// UpdateKey implements idforge.KeyUpdater.
func (s *Store) UpdateKey(ctx context.Context, name string, step int64, description string) error {
	return update(s, s.keys, name, strconv.Quote(name), func(k *idforge.Key) error {
		if err := k.ValidateUpdate(step, description); err != nil {
			return err
		}
		k.Step, k.Description, k.Updated = step, description, time.Now()
		return nil
	})
}

// CreateSerial implements idforge.SerialStore.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := def.Validate(); err != nil {
		return err
	}
	def.Updated = time.Now()
	return put(s, s.serials, def.Name, claim.SerialName(def.Name), def)
}

// Serial implements idforge.SerialStore.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	return get(s, s.serials, name, claim.SerialName(name))
}

// Serials implements idforge.SerialStore.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	return list(s, s.serials)
}

// defKey is where a definition lives in s.defs.
func defKey(kind, name string) string { return kind + "\x00" + name }

// CreateDefinition implements idforge.DefinitionStore.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	d.Retired, d.Updated = false, time.Now()
	return put(s, s.defs, defKey(d.Kind, d.Name), claim.DefinitionName(d.Kind, d.Name), d)
}

// UpdateDefinition implements idforge.DefinitionStore.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return s.changeDefinition(d.Kind, d.Name, func(old *idforge.Definition) error {
		if old.Retired {
			return fmt.Errorf("%w: %s", idforge.ErrRetired, claim.DefinitionName(d.Kind, d.Name))
		}
		old.Spec, old.Description = d.Spec, d.Description
		return nil
	})
}

// RetireDefinition implements idforge.DefinitionStore.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	return s.changeDefinition(kind, name, func(old *idforge.Definition) error {
		old.Retired = true
		return nil
	})
}

// changeDefinition applies change to a stored definition and stamps it.
func (s *Store) changeDefinition(kind, name string, change func(*idforge.Definition) error) error {
	return update(s, s.defs, defKey(kind, name), claim.DefinitionName(kind, name), func(d *idforge.Definition) error {
		d.Updated = time.Now()
		return change(d)
	})
}

// Definition implements idforge.DefinitionStore.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	return get(s, s.defs, defKey(kind, name), claim.DefinitionName(kind, name))
}

// Definitions implements idforge.DefinitionStore.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	all, err := list(s, s.defs)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d idforge.Definition) bool { return d.Kind != kind }), nil
}

// put sets m[key] (m is s.keys, s.serials or s.defs) under the lock,
// unless key is taken: ErrKeyExists naming it as label (`serial "s"`).
func put[T any](s *Store, m map[string]T, key, label string, v T) error {
	return locked(s, func() error {
		if _, ok := m[key]; ok {
			return fmt.Errorf("%w: %s", idforge.ErrKeyExists, label)
		}
		m[key] = v
		return nil
	})
}

// get reads m[key] under the lock, as put; ErrUnknownKey names a missing
// one as label.
func get[T any](s *Store, m map[string]T, key, label string) (v T, err error) {
	err = update(s, m, key, label, func(p *T) error { v = *p; return nil })
	return v, err
}

// update applies change to m[key] under the lock, as get, and keeps the
// result unless change fails.
func update[T any](s *Store, m map[string]T, key, label string, change func(*T) error) error {
	return locked(s, func() error {
		v, ok := m[key]
		if !ok {
			return fmt.Errorf("%w: %s", idforge.ErrUnknownKey, label)
		}
		if err := change(&v); err != nil {
			return err
		}
		m[key] = v
		return nil
	})
}

// list returns the values of m, as put, under the lock and sorted by key.
func list[T any](s *Store, m map[string]T) (out []T, err error) {
	err = locked(s, func() error {
		out = make([]T, 0, len(m))
		for _, key := range slices.Sorted(maps.Keys(m)) {
			out = append(out, m[key])
		}
		return nil
	})
	return out, err
}

// locked runs fn under the lock unless the store is closed or failing.
func locked(s *Store, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	return fn()
}

// Ping implements idforge.Store.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check()
}

// Close implements idforge.Store. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// GlobalOrder implements idforge.GlobalOrderStore: claims on one Store
// are serialised by its mutex.
func (s *Store) GlobalOrder(context.Context) error { return nil }
