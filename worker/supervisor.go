package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A Target issues with a supervised worker ID: a snowflake generator,
// adapted in three lines (package worker does not import snowflake):
//
//	type generator struct{ *snowflake.Generator }
//
//	func (g generator) Bind(l worker.Lease) error { return g.Rebind(l.ID(), l.LastTime(), l) }
type Target interface {
	// LastIssued returns the newest time the target issued at, zero when
	// none. The Supervisor reports it to the lease, for the coordinator
	// to hand to the ID's next holder.
	LastIssued() time.Time
	// Bind switches the target to lease after the one it issued with was
	// lost: from then on it issues with lease.ID(), only while
	// lease.ValidUntil() allows and only after lease.LastTime(). An
	// error (the ID does not fit, say) makes the Supervisor release the
	// lease and acquire another.
	Bind(lease Lease) error
}

// Supervisor defaults.
const (
	// DefaultReportInterval is how often the newest issued time goes to
	// the lease.
	DefaultReportInterval = time.Second
	// acquireTimeout bounds one attempt to acquire a new lease.
	acquireTimeout = 10 * time.Second
	// releaseTimeout bounds giving the lease back on Close.
	releaseTimeout = 5 * time.Second
	// retryMin and retryMax bound the backoff between failed attempts.
	retryMin, retryMax = 100 * time.Millisecond, 5 * time.Second
)

// A SupervisorOption changes a default of Supervise.
type SupervisorOption func(*supervisorOptions)

type supervisorOptions struct {
	log    *slog.Logger
	report time.Duration
}

// WithLogger sends the Supervisor's log lines (a lost lease, a new one,
// failed attempts) to log instead of slog.Default().
func WithLogger(log *slog.Logger) SupervisorOption {
	return func(o *supervisorOptions) { o.log = log }
}

// Supervisor keeps a target issuing with a live worker-ID lease, as etcd's
// concurrency.Session keeps its lease alive, and goes one step further: it
// survives losing the lease. It feeds the target's newest issued time to
// the lease, and when the lease is lost (its renewals failed, or the
// process was frozen past it) it acquires a new one from the same
// provider and binds the target to it, retrying with backoff. In between
// the target refuses to issue (its guard, the lost lease, has expired):
// never an ID with a worker ID another node may hold. A Supervisor is safe
// for concurrent use.
type Supervisor struct {
	provider Provider
	max      int64
	target   Target
	opts     supervisorOptions

	mu    sync.Mutex
	lease Lease

	ctx       context.Context // cancelled by Close: ends an attempt under way
	cancel    context.CancelFunc
	done      chan struct{} // closed when the supervising goroutine has returned
	closeOnce sync.Once
	closeErr  error
}

// Supervise supervises first, a lease from p on an ID in [0, max] that
// target already issues with, until Close. Supervise itself does not
// block: acquiring the first lease (and building the target on it) is the
// caller's, so that its failure is the caller's start-up error.
func Supervise(p Provider, max int64, first Lease, target Target, opts ...SupervisorOption) *Supervisor {
	o := supervisorOptions{log: slog.Default(), report: DefaultReportInterval}
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Supervisor{provider: p, max: max, target: target, opts: o, lease: first,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go s.run()
	return s
}

// Lease returns the current lease: the one the target issues with, or the
// lost one while a new one is being acquired.
func (s *Supervisor) Lease() Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease
}

// Done is closed when supervision has ended, after Close.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Close ends supervision (an attempt to acquire under way is cancelled),
// reports the target's newest issued time to the current lease and
// releases it, waiting at most 5 s: past that the lease lapses at the
// coordinator anyway. Close the target first, so that nothing is issued
// with an ID given back. Close is idempotent; it returns the release's
// error.
func (s *Supervisor) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		<-s.done
		lease := s.Lease()
		lease.Report(s.target.LastIssued())
		s.closeErr = release(lease)
	})
	return s.closeErr
}

// release gives l back, waiting at most releaseTimeout (also after Close
// began: a lease not given back blocks its ID until it lapses).
func release(l Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	return l.Release(ctx)
}

func (s *Supervisor) run() {
	defer close(s.done)
	tick := time.NewTicker(s.opts.report)
	defer tick.Stop()
	for {
		lease := s.Lease()
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
			lease.Report(s.target.LastIssued())
			continue
		case <-lease.Done(): // nil, never ready, for a lease that never ends
		}
		s.opts.log.Error("worker ID lease lost; snowflake IDs are refused until a new one is acquired", "worker", lease.ID())
		release(lease)
		if !s.reacquire() {
			return
		}
	}
}

// reacquire acquires a new lease and binds the target to it, retrying
// until it succeeds (true) or Close (false).
func (s *Supervisor) reacquire() bool {
	for backoff := retryMin; ; backoff = min(2*backoff, retryMax) {
		ctx, cancel := context.WithTimeout(s.ctx, acquireTimeout)
		next, err := s.provider.Acquire(ctx, s.max)
		cancel()
		if err == nil {
			if err = s.target.Bind(next); err == nil {
				s.mu.Lock()
				s.lease = next
				s.mu.Unlock()
				s.opts.log.Info("worker ID re-acquired", "worker", next.ID(),
					"valid_until", next.ValidUntil().UTC().Format(time.RFC3339Nano))
				return true
			}
			release(next)
		}
		s.opts.log.Warn("re-acquiring a worker ID failed; retrying", "err", err, "retry_in", backoff)
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(backoff):
		}
	}
}
