// Package memstore is an in-memory idforge.Store for tests and examples.
//
// It keeps nothing across restarts, so it must NEVER be used to issue IDs
// that outlive the process: a restart would hand the same numbers out again.
// Fail lets a test make every call fail, to exercise outage handling.
package memstore

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/idforge/idforge"
)

// Store is an in-memory idforge.Store. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	keys    map[string]idforge.Key
	serials map[string]idforge.Serial
	fail    error
	closed  bool
	claims  int
}

var (
	_ idforge.Store           = (*Store)(nil)
	_ idforge.SegmentReturner = (*Store)(nil)
	_ idforge.SerialStore     = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{keys: make(map[string]idforge.Key), serials: make(map[string]idforge.Serial)}
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
	k, ok := s.keys[key]
	if !ok || k.Strategy != idforge.StrategySegment {
		return idforge.Segment{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
	}
	if step == 0 {
		step = k.Step
	}
	if step <= 0 {
		return idforge.Segment{}, fmt.Errorf("%w: step %d for key %q", idforge.ErrInvalidArgument, step, key)
	}
	if k.MaxID > math.MaxInt64-step {
		return idforge.Segment{}, fmt.Errorf("%w: key %q at max_id %d cannot grow by %d", idforge.ErrSpaceExhausted, key, k.MaxID, step)
	}
	seg := idforge.Segment{Start: k.MaxID, End: k.MaxID + step, Step: k.Step}
	k.MaxID = seg.End
	k.Updated = time.Now()
	s.keys[key] = k
	s.claims++
	return seg, nil
}

// ReturnSegment implements idforge.SegmentReturner.
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	k, ok := s.keys[key]
	if !ok || k.Strategy != idforge.StrategySegment {
		return false, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
	}
	if from > to {
		return false, fmt.Errorf("%w: returning [%d, %d) for key %q", idforge.ErrInvalidArgument, from, to, key)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if _, ok := s.keys[k.Name]; ok {
		return fmt.Errorf("%w: %q", idforge.ErrKeyExists, k.Name)
	}
	k.Updated = time.Now()
	s.keys[k.Name] = k
	return nil
}

// Key implements idforge.KeyStore.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return idforge.Key{}, err
	}
	k, ok := s.keys[name]
	if !ok {
		return idforge.Key{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	return k, nil
}

// Keys implements idforge.KeyStore.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]idforge.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CreateSerial implements idforge.SerialStore.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := def.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if _, ok := s.serials[def.Name]; ok {
		return fmt.Errorf("%w: serial %q", idforge.ErrKeyExists, def.Name)
	}
	def.Updated = time.Now()
	s.serials[def.Name] = def
	return nil
}

// Serial implements idforge.SerialStore.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return idforge.Serial{}, err
	}
	def, ok := s.serials[name]
	if !ok {
		return idforge.Serial{}, fmt.Errorf("%w: serial %q", idforge.ErrUnknownKey, name)
	}
	return def, nil
}

// Serials implements idforge.SerialStore.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]idforge.Serial, 0, len(s.serials))
	for _, d := range s.serials {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
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
