package redis

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/wait"
	"github.com/idforge/idforge/store/internal/claim"
)

// redisError marks a failure to use Redis, as opposed to a database error
// or a verdict about the key: the claim then goes to the database.
type redisError struct{ err error }

func (e *redisError) Error() string { return "redis: " + e.err.Error() }
func (e *redisError) Unwrap() error { return e.err }

// claimReply is claimScript's answer.
type claimReply struct {
	status         string // "ok", "room", "behind" or "init"
	cur, max, step int64  // the hash before the claim; zero for "init"
	end            int64  // "ok": the segment is [cur, end)
}

func (r claimReply) segment() idforge.Segment {
	return idforge.Segment{Start: r.cur, End: r.end, Step: r.step}
}

// ClaimSegment hands out the next step IDs of key (the key's stored step
// when step is 0) from the Redis hash of the key, adding room to the hash
// from the database first when it has too little; when Redis fails it
// claims from the database directly. See the package documentation for
// the failure cases.
//
// Errors: idforge.ErrInvalidArgument for a negative step;
// idforge.ErrUnknownKey when the database has no segment key of that name;
// idforge.ErrSpaceExhausted when the key would pass the largest int64;
// idforge.ErrUnavailable (wrapping the causes) when the room is used up
// and the database fails, or Redis and the database both fail; the
// context's error when ctx ends first; idforge.ErrClosed after Close.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if err := cmp.Or(s.checkOpen(), claim.CheckStep(key, step)); err != nil {
		return idforge.Segment{}, err
	}
	if err := ctx.Err(); err != nil {
		return idforge.Segment{}, fmt.Errorf("redisseg: claim segment for key %q: %w", key, err)
	}
	seg, err := s.claim(ctx, key, step)
	if errors.Is(err, idforge.ErrUnknownKey) {
		s.keys.Delete(key) // remember nothing of names that are not keys
	}
	return seg, err
}

// claim is ClaimSegment after the argument checks.
func (s *Store) claim(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if !s.redisUsable() {
		return s.direct(ctx, key, step, "Redis failed ("+s.redisCause()+")")
	}
	ks := s.state(key)
	for range maxRounds {
		seg, done, err := s.claimRound(ctx, key, step, ks)
		if err == nil {
			if done {
				return seg, nil
			}
			continue
		}
		var re *redisError
		if !errors.As(err, &re) {
			return idforge.Segment{}, err
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(cerr, context.DeadlineExceeded) {
				s.redisFailed(re.err) // Redis did not answer in time
			}
			return idforge.Segment{}, fmt.Errorf("redisseg: claim segment for key %q: %w (%v)", key, cerr, re)
		}
		s.redisFailed(re.err)
		return s.direct(ctx, key, step, "Redis failed ("+re.err.Error()+")")
	}
	// Other claimers keep taking the room this claim added: the
	// database serves it instead, which is always right.
	return s.direct(ctx, key, step, "Redis's room kept running out")
}

// claimRound tries Redis once and, when its room is short, adds to it. It
// reports done with the segment, or not done when the claim should be
// tried again.
func (s *Store) claimRound(ctx context.Context, key string, step int64, ks *keyState) (idforge.Segment, bool, error) {
	r, err := s.runClaim(ctx, key, step, ks.floor.Load())
	if err != nil {
		return idforge.Segment{}, false, err
	}
	if r.status == "ok" {
		return s.served(key, ks, r), true, nil
	}
	return s.refill(ctx, key, step, ks)
}

// served counts a segment Redis handed out and, when the room left is
// short, starts a background refill.
func (s *Store) served(key string, ks *keyState, r claimReply) idforge.Segment {
	s.stats.redis.Add(1)
	s.refillAhead(key, ks, r.end-r.cur, r.max-r.end)
	return r.segment()
}

// runClaim runs claimScript.
func (s *Store) runClaim(ctx context.Context, key string, step, floor int64) (claimReply, error) {
	v, err := claimScript.runOnce(ctx, s.rdb, []string{s.hashKey(key)}, step, floor).Slice()
	if err != nil {
		return claimReply{}, &redisError{err}
	}
	s.redisAnswered()
	r, err := parseClaim(v)
	if err != nil {
		return claimReply{}, &redisError{err}
	}
	return r, nil
}

func parseClaim(v []any) (claimReply, error) {
	bad := func() (claimReply, error) { return claimReply{}, fmt.Errorf("unexpected claim reply %q", v) }
	if len(v) == 0 {
		return bad()
	}
	var r claimReply
	r.status, _ = v[0].(string)
	want := 4
	switch r.status {
	case "init":
		return r, nil
	case "ok":
		want = 5
	case "room", "behind":
	default:
		return bad()
	}
	if len(v) != want {
		return bad()
	}
	nums := []*int64{&r.cur, &r.max, &r.step, &r.end}
	for i := 1; i < want; i++ {
		str, _ := v[i].(string)
		n, err := strconv.ParseInt(str, 10, 64)
		if err != nil {
			return bad()
		}
		*nums[i-1] = n
	}
	return r, nil
}

// refill adds room to key's hash: it reserves a block in the database and
// installs it in Redis. It takes one of the following turns:
//   - another caller refilled meanwhile: the claim is served, done;
//   - the block was installed: not done, claim again;
//   - a later block was installed first ("stale"): the claim is served
//     from this block, done;
//   - the install failed, its outcome unknown: a redisError, and the
//     block is abandoned.
func (s *Store) refill(ctx context.Context, key string, step int64, ks *keyState) (idforge.Segment, bool, error) {
	select {
	case ks.sem <- struct{}{}:
	case <-ctx.Done():
		return idforge.Segment{}, false, fmt.Errorf("redisseg: claim segment for key %q: %w", key, ctx.Err())
	}
	defer func() { <-ks.sem }()

	// Look again: another caller of this Store may have refilled while
	// this one waited.
	r, err := s.runClaim(ctx, key, step, ks.floor.Load())
	if err != nil {
		return idforge.Segment{}, false, err
	}
	if r.status == "ok" {
		return s.served(key, ks, r), true, nil
	}

	// One node at a time reserves for a key; the others wait for its
	// block, up to lockWait, then go ahead on their own. The lock only
	// saves ID space: correctness never depends on it.
	token := newToken()
	locked := false
	for waitUntil := time.Now().Add(lockWait); ; {
		if locked, err = s.lock(ctx, key, token); err != nil {
			return idforge.Segment{}, false, err
		}
		if locked || time.Now().After(waitUntil) {
			break
		}
		if err := wait.For(ctx, lockPoll); err != nil {
			return idforge.Segment{}, false, fmt.Errorf("redisseg: claim segment for key %q: %w", key, err)
		}
		if r, err = s.runClaim(ctx, key, step, ks.floor.Load()); err != nil {
			return idforge.Segment{}, false, err
		}
		if r.status == "ok" {
			return s.served(key, ks, r), true, nil
		}
	}
	if locked {
		defer s.unlock(key, token)
	}

	n := step
	if n == 0 {
		n = r.step // 0 when the hash needs initialising
	}
	if n == 0 {
		k, err := s.db.Key(ctx, key)
		if err != nil {
			return idforge.Segment{}, false, s.dbError(ctx, key, err, "Redis has no room for it and the database cannot be read")
		}
		if k.Strategy != idforge.StrategySegment {
			return idforge.Segment{}, false, claim.NotSegmentKey(key, string(k.Strategy))
		}
		n, r.step = k.Step, k.Step
	}
	lo, hi, kstep, err := s.reserveBlock(ctx, key, n, r)
	if err != nil {
		return idforge.Segment{}, false, err
	}
	res, err := s.install(ctx, key, lo, hi, kstep, ks.floor.Load())
	if err != nil {
		// Whether the block reached Redis is unknown: it is abandoned,
		// neither used nor handed back, and the claim goes to the
		// database.
		return idforge.Segment{}, false, err
	}
	if res == "stale" {
		seg, ok := s.fromBlock(key, lo, hi, n, kstep)
		return seg, ok, nil
	}
	return idforge.Segment{}, false, nil
}

// fromBlock serves a claim of n IDs from the reserved block [lo, hi) that
// Redis certainly did not take (the install said "stale"), and hands the
// rest back to the database. It reports false (and hands the whole block
// back) when the block is shorter than n.
func (s *Store) fromBlock(key string, lo, hi, n, step int64) (idforge.Segment, bool) {
	if hi-lo < n {
		s.giveBack(key, lo, hi)
		return idforge.Segment{}, false
	}
	seg := idforge.Segment{Start: lo, End: lo + n, Step: step}
	s.giveBack(key, seg.End, hi)
	s.stats.direct.Add(1)
	return seg, true
}

// reserveBlock claims a block for Redis in the database: max(Factor × n,
// Reserve) IDs, or what is left below the largest int64 when that is
// enough for n together with the room Redis has (r).
func (s *Store) reserveBlock(ctx context.Context, key string, n int64, r claimReply) (lo, hi, step int64, err error) {
	const what = "Redis's room is used up and the database cannot add to it"
	size := s.reserveSize(n)
	for try := 0; ; try++ {
		seg, err := s.db.ClaimSegment(ctx, key, size)
		if err == nil {
			s.stats.reservations.Add(1)
			// A claim of a given size may not know the key's stored step
			// (MySQL reads it after the claim, and that read can fail):
			// keep the one Redis has, never install 0, which would make
			// every claim of the key's step an empty segment.
			if step = cmp.Or(seg.Step, r.step); step <= 0 {
				return 0, 0, 0, s.dbError(ctx, key, errors.New("the key's step could not be read"), what)
			}
			return seg.Start, seg.End, step, nil
		}
		if !errors.Is(err, idforge.ErrSpaceExhausted) || try == 2 {
			return 0, 0, 0, s.dbError(ctx, key, err, what)
		}
		k, err := s.db.Key(ctx, key)
		if err != nil {
			return 0, 0, 0, s.dbError(ctx, key, err, what)
		}
		space := math.MaxInt64 - k.MaxID
		need := n
		if r.status == "room" && r.max == k.MaxID {
			need -= r.max - r.cur // the block would continue the room
		}
		if space <= 0 || space < need {
			return 0, 0, 0, fmt.Errorf("%w: key %q at max_id %d cannot grow by %d", idforge.ErrSpaceExhausted, key, k.MaxID, need)
		}
		size = space
	}
}

// dbError classifies a database error: verdicts about the key and the
// caller's own cancellation pass through; anything else means the
// database is unavailable, which what explains.
func (s *Store) dbError(ctx context.Context, key string, err error, what string) error {
	switch {
	case errors.Is(err, idforge.ErrUnknownKey), errors.Is(err, idforge.ErrSpaceExhausted),
		errors.Is(err, idforge.ErrInvalidArgument), errors.Is(err, idforge.ErrClosed):
		return err
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Errorf("redisseg: key %q: %w", key, err)
	}
	return fmt.Errorf("%w: redisseg: key %q: %s: %w", idforge.ErrUnavailable, key, what, err)
}

// direct claims from the database, without Redis. why says why, for the
// error when the database fails too.
func (s *Store) direct(ctx context.Context, key string, step int64, why string) (idforge.Segment, error) {
	seg, err := s.db.ClaimSegment(ctx, key, step)
	if err != nil {
		return idforge.Segment{}, s.dbError(ctx, key, err, why+" and so did the database")
	}
	s.stats.direct.Add(1)
	atomicmax.Raise(&s.state(key).floor, seg.End)
	return seg, nil
}

// install runs installScript for the block [lo, hi).
func (s *Store) install(ctx context.Context, key string, lo, hi, step, floor int64) (string, error) {
	res, err := installScript.runOnce(ctx, s.rdb, []string{s.hashKey(key)}, lo, hi, step, floor).Text()
	if err != nil {
		return "", &redisError{err}
	}
	switch res {
	case "reset":
		s.stats.resets.Add(1)
	case "extended", "stale":
	default:
		return "", &redisError{fmt.Errorf("unexpected install reply %q", res)}
	}
	return res, nil
}

// peek returns the room of key's hash; ok is false when the hash is
// missing or was written by another server instance.
func (s *Store) peek(ctx context.Context, key string) (cur, max int64, ok bool, err error) {
	v, err := peekScript.Run(ctx, s.rdb, []string{s.hashKey(key)}).Slice()
	if errors.Is(err, goredis.Nil) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, &redisError{err}
	}
	cur, max, err = parsePeek(v)
	if err != nil {
		return 0, 0, false, &redisError{err}
	}
	return cur, max, true, nil
}

func parsePeek(v []any) (cur, max int64, err error) {
	if len(v) == 2 {
		c, _ := v[0].(string)
		m, _ := v[1].(string)
		var err1, err2 error
		cur, err1 = strconv.ParseInt(c, 10, 64)
		max, err2 = strconv.ParseInt(m, 10, 64)
		if err1 == nil && err2 == nil {
			return cur, max, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected peek reply %q", v)
}

// lock takes key's refill lock for token; see lockScript.
func (s *Store) lock(ctx context.Context, key, token string) (bool, error) {
	n, err := lockScript.Run(ctx, s.rdb, []string{s.hashKey(key)}, token, lockTTL.Milliseconds()).Int()
	if err != nil {
		return false, &redisError{err}
	}
	return n == 1, nil
}

// unlock releases key's refill lock if token holds it. A failure is
// ignored: the lock lapses after lockTTL.
func (s *Store) unlock(key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	unlockScript.Run(ctx, s.rdb, []string{s.hashKey(key)}, token)
}

// giveBack hands the unused block [from, to) back to the database when it
// can take it (idforge.SegmentReturner) and nobody has claimed since.
// Failing only leaves a gap.
func (s *Store) giveBack(key string, from, to int64) {
	r, ok := s.db.(idforge.SegmentReturner)
	if !ok || from >= to {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := r.ReturnSegment(ctx, key, from, to); err != nil {
		s.log.Debug("redisseg: could not hand an unused block back", "key", key, "from", from, "to", to, "err", err)
	}
}

// refillAhead starts a background refill of key when a claim of n IDs
// left fewer than one reservation's worth (left) in Redis: the double
// buffer, so that claims do not wait for the database and Redis holds
// between one and two reservations of room.
func (s *Store) refillAhead(key string, ks *keyState, n, left int64) {
	size := s.reserveSize(n)
	if left >= size {
		return
	}
	if t := ks.aheadAfter.Load(); t != 0 && time.Now().UnixNano() < t {
		return
	}
	if !ks.ahead.CompareAndSwap(false, true) {
		return
	}
	s.aheadMu.Lock()
	if s.closed.Load() {
		s.aheadMu.Unlock()
		ks.ahead.Store(false)
		return
	}
	s.ahead.Add(1)
	s.aheadMu.Unlock()
	go func() {
		defer s.ahead.Done()
		defer ks.ahead.Store(false)
		err := s.fillAhead(key, ks, n, size)
		if err == nil {
			if ks.aheadAfter.Swap(0) != 0 {
				s.log.Info("redisseg: background refill works again", "key", key)
			}
			return
		}
		if s.closed.Load() {
			return
		}
		var re *redisError
		if errors.As(err, &re) {
			s.redisFailed(re.err)
		}
		if ks.aheadAfter.Swap(time.Now().Add(s.retryAfter).UnixNano()) == 0 && !errors.Is(err, idforge.ErrSpaceExhausted) {
			s.log.Warn("redisseg: background refill failed; Redis's room shrinks until it works", "key", key, "err", err)
		}
	}()
}

// fillAhead is the background refill: under this Store's and the
// cluster's lock for the key, it reserves a block of size when Redis
// still holds less than that.
func (s *Store) fillAhead(key string, ks *keyState, n, size int64) error {
	ctx, cancel := context.WithTimeout(s.aheadCtx, aheadTimeout)
	defer cancel()
	select {
	case ks.sem <- struct{}{}:
	default:
		return nil // a claim of this Store is refilling
	}
	defer func() { <-ks.sem }()
	token := newToken()
	locked, err := s.lock(ctx, key, token)
	if err != nil || !locked {
		return err // !locked: another node is refilling
	}
	defer s.unlock(key, token)
	cur, max, ok, err := s.peek(ctx, key)
	if err != nil || !ok || max-cur >= size {
		return err // a missing hash is for a claim to initialise
	}
	lo, hi, step, err := s.reserveBlock(ctx, key, n, claimReply{status: "room", cur: cur, max: max})
	if err != nil {
		return err
	}
	res, err := s.install(ctx, key, lo, hi, step, ks.floor.Load())
	if err == nil && res == "stale" {
		s.giveBack(key, lo, hi)
	}
	return err // on an error the block's fate is unknown: abandoned
}

// ReturnSegment implements idforge.SegmentReturner. When Redis's cur is
// still to, it is set back to from and the values are handed out again.
// Otherwise, and when Redis has no valid hash for the key or is known to
// be down, the database's ReturnSegment decides (its max_id is to only if
// the segment was the last one claimed there). Either way a value is only
// taken back when nobody can have received it since.
//
// Errors: idforge.ErrInvalidArgument when from > to or from < 1;
// idforge.ErrUnknownKey when the database has no such key;
// idforge.ErrUnavailable when the call to Redis failed, so that whether
// it took the values back is unknown (they must not be issued either
// way); idforge.ErrClosed after Close.
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	if err := cmp.Or(s.checkOpen(), claim.CheckReturn(key, from, to)); err != nil {
		return false, err
	}
	if s.redisUsable() {
		n, err := returnScript.runOnce(ctx, s.rdb, []string{s.hashKey(key)}, from, to).Int()
		if err != nil {
			// Redis may have taken the values back: asking the database
			// too could hand them out twice.
			if ctx.Err() == nil {
				s.redisFailed(err)
			}
			return false, fmt.Errorf("%w: redisseg: return segment [%d, %d) of key %q: outcome unknown: %w",
				idforge.ErrUnavailable, from, to, key, err)
		}
		s.redisAnswered()
		if n == 1 {
			return true, nil
		}
	}
	r, ok := s.db.(idforge.SegmentReturner)
	if !ok {
		return false, nil
	}
	done, err := r.ReturnSegment(ctx, key, from, to)
	if err != nil {
		return false, fmt.Errorf("redisseg: %w", err)
	}
	return done, nil
}

// newToken returns a random refill-lock token.
func newToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GlobalOrder implements idforge.GlobalOrderStore: it cannot. A node that
// finds Redis failing claims from the database directly, above Redis's
// room, while other nodes go on claiming from the room below it, so a
// claim that begins after another returned may get lower values. A key in
// global order needs the database store itself (its URL as the store).
func (s *Store) GlobalOrder(context.Context) error {
	return fmt.Errorf("%w: the Redis segment store hands out segments from Redis and, while Redis fails, from the database above them, "+
		"so its claims across nodes are not in order; use the database store (the store parameter's URL) for a key in global order", idforge.ErrInvalidArgument)
}
