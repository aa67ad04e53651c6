package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
)

// CreateKey creates the key in the database. Redis learns of it on its
// first claim; fields a hash of the same name may hold from an earlier
// life of the name are dropped, so that the key starts at its MaxID.
// Errors are the database's (ErrKeyExists, ErrInvalidKey, …), and
// idforge.ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.db.CreateKey(ctx, k); err != nil {
		return err
	}
	if k.Strategy == idforge.StrategySegment && s.redisUsable() {
		// Best effort: a claim racing with this only loses its room.
		err := s.rdb.HDel(ctx, s.hashKey(k.Name), "cur", "max", "step", "inst").Err()
		if err != nil && ctx.Err() == nil {
			s.redisFailed(err)
		}
	}
	return nil
}

// Key returns the key as the database has it, except that a segment key's
// MaxID is Redis's cur when Redis holds a valid room for it: the start of
// the next segment handed out. Errors are the database's, and
// idforge.ErrClosed after Close.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	if err := s.checkOpen(); err != nil {
		return idforge.Key{}, err
	}
	k, err := s.db.Key(ctx, name)
	if err != nil {
		return idforge.Key{}, err
	}
	if k.Strategy != idforge.StrategySegment || !s.redisUsable() {
		return k, nil
	}
	cur, _, ok, err := s.peek(ctx, name)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.redisFailed(err)
		}
	case ok:
		s.redisAnswered()
		k.MaxID = cur
	}
	return k, nil
}

// Keys returns every key, sorted by name, with MaxID as Key reports it.
// Errors are the database's, and idforge.ErrClosed after Close.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	keys, err := s.db.Keys(ctx)
	if err != nil {
		return nil, err
	}
	var idx []int
	for i, k := range keys {
		if k.Strategy == idforge.StrategySegment {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 || !s.redisUsable() {
		return keys, nil
	}
	cmds := make([]*goredis.Cmd, len(idx))
	_, err = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for j, i := range idx {
			cmds[j] = peekScript.Eval(ctx, p, []string{s.hashKey(keys[i].Name)})
		}
		return nil
	})
	if err != nil && !isNil(err) {
		if ctx.Err() == nil {
			s.redisFailed(err)
		}
		return keys, nil
	}
	s.redisAnswered()
	for j, i := range idx {
		v, err := cmds[j].Slice()
		if err != nil {
			continue // nil: no valid room
		}
		if cur, _, err := parsePeek(v); err == nil {
			keys[i].MaxID = cur
		}
	}
	return keys, nil
}

func isNil(err error) bool { return err == goredis.Nil }

// setStep rewrites the step a key's hash caches for claims of step 0,
// where the hash has one.
var setStep = newScript(`if redis.call('HEXISTS', KEYS[1], 'step') == 1 then redis.call('HSET', KEYS[1], 'step', ARGV[1]) end return 0`)

// UpdateKey implements idforge.KeyUpdater by changing the key in the
// database; the step Redis caches for the key follows (best effort: a
// room installed later reads it from the database anyway). Errors are the
// database's (ErrUnknownKey, ErrInvalidArgument, …), an error wrapping
// ErrInvalidArgument when the database cannot change keys, and
// idforge.ErrClosed after Close.
func (s *Store) UpdateKey(ctx context.Context, name string, step int64, description string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	u, ok := s.db.(idforge.KeyUpdater)
	if !ok {
		return fmt.Errorf("%w: the database behind Redis cannot change keys", idforge.ErrInvalidArgument)
	}
	if err := u.UpdateKey(ctx, name, step, description); err != nil {
		return err
	}
	if step > 0 && s.redisUsable() {
		if err := setStep.runOnce(ctx, s.rdb, []string{s.hashKey(name)}, step).Err(); err != nil && ctx.Err() == nil {
			s.redisFailed(err)
		}
	}
	return nil
}
