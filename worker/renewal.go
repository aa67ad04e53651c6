package worker

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
)

// RenewalConfig describes a worker ID held at a coordinator for a limited
// time and kept by renewing it (etcd leases, Redis keys with a TTL, SQL
// heartbeats).
type RenewalConfig struct {
	// ID is the worker ID held.
	ID int64
	// TTL is how long the coordinator keeps the ID for this node after a
	// renewal, counted from the moment the renewal was sent.
	TTL time.Duration
	// Margin is taken off TTL to give ValidUntil. It absorbs clock-rate
	// drift between node and coordinator and the time from the check
	// before an ID is issued to the ID leaving the process. Default TTL/3.
	Margin time.Duration
	// Interval is the longest time between renewals. Default TTL/3, so
	// one failed renewal is survived. A renewal comes sooner when less
	// than two intervals of the lease are left.
	Interval time.Duration
	// Acquired is when the request that obtained the ID was sent.
	Acquired time.Time
	// LastTime is the newest time earlier holders recorded for the ID.
	LastTime time.Time
	// Renew makes the coordinator keep the ID for this node for another
	// TTL and records last, the newest time this node issued at. It must
	// fail, never succeed, when another node holds the ID; an error
	// wrapping idforge.ErrLeaseLost ends the lease at once, any other is
	// retried until ValidUntil.
	Renew func(ctx context.Context, last time.Time) error
	// Release gives the ID back, recording last. Best effort.
	Release func(ctx context.Context, last time.Time) error
	// Cache, when set, is updated after every renewal, so that a restart
	// while the coordinator is down can resume the ID (see Cache).
	Cache *Cache
	// Logger and Clock default to slog.Default() and idforge.SystemClock.
	Logger *slog.Logger
	Clock  idforge.Clock
}

// Renewal is a Lease renewed in the background. Its ValidUntil only moves
// forward, and only after a renewal that was sent at least TTL−Margin
// before it: so the node stops issuing before the coordinator can give
// the ID to anyone else, also when the process was frozen or the network
// cut.
type Renewal struct {
	cfg        RenewalConfig
	validUntil atomic.Int64 // unix nanoseconds
	reported   atomic.Int64 // unix milliseconds, newest issued time
	done       chan struct{}
	stop       chan struct{}
	stopOnce   sync.Once
	wg         sync.WaitGroup
	released   atomic.Bool
}

var _ Lease = (*Renewal)(nil)

// StartRenewal returns the lease and starts renewing it until Release or
// until a renewal comes too late.
func StartRenewal(cfg RenewalConfig) *Renewal {
	cfg = cfg.withDefaults()
	r := &Renewal{cfg: cfg, done: make(chan struct{}), stop: make(chan struct{})}
	r.extend(cfg.Acquired)
	if !cfg.LastTime.IsZero() {
		r.reported.Store(cfg.LastTime.UnixMilli())
	}
	r.wg.Add(1)
	go r.loop()
	return r
}

func (cfg RenewalConfig) withDefaults() RenewalConfig {
	if cfg.Margin <= 0 {
		cfg.Margin = cfg.TTL / 3
	}
	if cfg.Interval <= 0 {
		cfg.Interval = cfg.TTL / 3
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Clock = cmp.Or(cfg.Clock, idforge.SystemClock)
	return cfg
}

// nextRenewal is how long to wait before the next renewal when left is
// what remains of the lease. Renewals come every Interval, but never later
// than halfway through what is left: a lease that starts short (an acquire
// that waited long for a replica) or one a failed renewal has worn down
// still gets a try before it runs out, instead of waking at ValidUntil only
// to give up. The floor of Interval/8 keeps a failing coordinator from being
// retried in a tight loop as the time left shrinks.
func (cfg RenewalConfig) nextRenewal(left time.Duration) time.Duration {
	if left <= 0 {
		return 0
	}
	return min(cfg.Interval, max(left/2, cfg.Interval/8))
}

// extend moves ValidUntil to sent+TTL−Margin, never backwards.
func (r *Renewal) extend(sent time.Time) {
	atomicmax.Raise(&r.validUntil, sent.Add(r.cfg.TTL-r.cfg.Margin).UnixNano())
}

func (r *Renewal) loop() {
	defer r.wg.Done()
	failures := 0
	for {
		left := time.Until(time.Unix(0, r.validUntil.Load())) // monotonic-safe enough for scheduling
		wait := r.cfg.nextRenewal(left)
		select {
		case <-r.stop:
			return
		case <-time.After(wait):
		}
		sent := r.cfg.Clock.Now()
		if !sent.Before(r.ValidUntil()) {
			r.lose("the lease ran out before it could be renewed", failures)
			return
		}
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(min(r.cfg.Interval, r.ValidUntil().Sub(sent))))
		err := r.cfg.Renew(ctx, r.LastReported())
		cancel()
		select {
		case <-r.stop:
			return
		default:
		}
		if errors.Is(err, idforge.ErrLeaseLost) {
			// The coordinator says another node holds the ID: stop now
			// rather than at ValidUntil.
			r.lose(err.Error(), failures+1)
			return
		}
		if err != nil {
			failures++
			r.cfg.Logger.Warn("worker ID renewal failed", "worker", r.cfg.ID, "attempt", failures,
				"valid_until", r.ValidUntil().Format(time.RFC3339Nano), "err", err)
			continue
		}
		if failures > 0 {
			r.cfg.Logger.Info("worker ID renewal recovered", "worker", r.cfg.ID, "failed_attempts", failures)
		}
		failures = 0
		r.extend(sent)
		if r.cfg.Cache != nil {
			if err := r.cfg.Cache.Save(r.cfg.ID, r.ValidUntil(), r.LastReported()); err != nil {
				r.cfg.Logger.Warn("saving the worker ID cache failed", "err", err)
			}
		}
	}
}

func (r *Renewal) lose(why string, failures int) {
	// First of all stop the generator: another node may hold the ID now
	// (a renewal answered ErrLeaseLost), so the time left on the old
	// lease is no permission to issue.
	r.validUntil.Store(0)
	r.cfg.Logger.Error("worker ID lease lost: this node stops issuing snowflake IDs with it",
		"worker", r.cfg.ID, "why", why, "failed_renewals", failures)
	if r.cfg.Cache != nil {
		r.cfg.Cache.Clear()
	}
	close(r.done)
}

// ID returns the worker ID.
func (r *Renewal) ID() int64 { return r.cfg.ID }

// ValidUntil returns the time until which the node may issue with the ID.
// Once the lease is lost it returns the Unix epoch, a time long past: never
// the zero Time, which a Lease uses to mean "without limit".
func (r *Renewal) ValidUntil() time.Time { return time.Unix(0, r.validUntil.Load()) }

// LastTime returns the newest time earlier holders recorded for the ID.
func (r *Renewal) LastTime() time.Time { return r.cfg.LastTime }

// Report records the newest time this node issued at, for the next
// renewal to store at the coordinator.
func (r *Renewal) Report(t time.Time) { atomicmax.Raise(&r.reported, t.UnixMilli()) }

// LastReported returns the newest time reported, zero when none.
func (r *Renewal) LastReported() time.Time {
	if ms := r.reported.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// Done is closed when the lease was lost or released.
func (r *Renewal) Done() <-chan struct{} { return r.done }

// Release stops renewing and gives the ID back. It is idempotent.
func (r *Renewal) Release(ctx context.Context) error {
	if !r.released.CompareAndSwap(false, true) {
		return nil
	}
	r.stopOnce.Do(func() { close(r.stop) })
	r.wg.Wait()
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	if r.cfg.Cache != nil {
		r.cfg.Cache.Clear()
	}
	// From now on this node must not issue: make that visible to anyone
	// still checking ValidUntil before giving the ID back.
	r.validUntil.Store(0)
	if r.cfg.Release == nil {
		return nil
	}
	return r.cfg.Release(ctx, r.LastReported())
}
