// Package holder is what the coordinated worker-ID providers share. Node
// is what every one of them (etcd, ZooKeeper, Redis, SQL) keeps of this
// node: its owner, logger, clock and worker ID cache. Holder is the flow
// the Redis and SQL providers share: an ID is held by a key or row that
// lapses unless renewed, every call to the coordinator is bounded by one
// timeout, and when the coordinator fails at start-up the node resumes
// its cached ID; the Holder also checks their shared settings (TTL,
// timeout: Defaults), words their configuration errors (Invalid) and
// closes the client an opener made (Owned). A provider plugs its
// protocol (claim, renew, release) and its words for messages into a
// Holder. Opener adapts the context-free Open of etcd and ZooKeeper.
package holder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
)

// Opener is the worker.Opener of a provider whose open needs no context:
// it answers a nil Provider, not a nil *P, when open fails.
func Opener[P worker.Provider](open func(*url.URL, worker.Options) (P, error)) worker.Opener {
	return func(_ context.Context, u *url.URL, opts worker.Options) (worker.Provider, error) {
		p, err := open(u, opts)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// Node is what a coordinated provider keeps of this node's
// worker.Options. Make it with NewNode.
type Node struct {
	Owner  string
	Logger *slog.Logger
	Clock  idforge.Clock
	Cache  *worker.Cache // nil when none is kept
}

// NewNode takes this node's opts, with their defaults, and a random owner
// unique to this process when they name none. It keeps a cache of the
// coordinator named name in opts.DataDir, when there is one, if
// cacheable: if name tells this coordinator apart from others.
func NewNode(opts worker.Options, name string, cacheable bool) Node {
	opts = opts.WithDefaults()
	n := Node{Owner: opts.Owner, Logger: opts.Logger, Clock: opts.Clock}
	if n.Owner == "" {
		n.Owner = coord.ProcessOwner()
	}
	if opts.DataDir != "" && cacheable {
		n.Cache = worker.NewCache(opts.DataDir, name, n.Owner)
	}
	return n
}

// Resume is worker.Resume with the node's cache, logger and clock.
func (n *Node) Resume(cfg worker.ResumeConfig) (worker.Lease, error) {
	cfg.Cache, cfg.Logger, cfg.Clock = n.Cache, n.Logger, n.Clock
	return worker.Resume(cfg)
}

// Holder is the provider-independent part of a provider of renewed worker
// IDs. Set the exported fields but the Node's, then call Start.
type Holder struct {
	// Who starts the provider's messages: "redis worker".
	Who string
	// Name identifies the coordinator in messages and in the cache.
	Name string
	// TTL is how long the coordinator keeps an ID after a renewal; the
	// lease is valid for TTL minus worker.RenewalConfig's default margin.
	TTL time.Duration
	// Timeout bounds every call to the coordinator.
	Timeout time.Duration
	// MaxDrift is how far this node's clock may be from its live peers'
	// at start (coord.CheckClock; the ages of their reports are exact).
	MaxDrift time.Duration
	// Renew and Release are worker.RenewalConfig's, for the ID id; each
	// call is bounded by Timeout.
	Renew, Release func(ctx context.Context, id int64, last time.Time) error
	// Resume holds worker.ResumeConfig's words (Coordinator, Failure,
	// NoCache, Then); Acquire fills in the rest.
	Resume worker.ResumeConfig

	// Node is set by Start.
	Node

	// Owned is the coordinator's client when the provider's opener made
	// it (closeonce.Adopt): the provider's Close closes it.
	Owned closeonce.Owned
}

// Invalid returns an error of the provider's, Who and the message,
// wrapping idforge.ErrInvalidArgument: for its Config and arguments.
func (h *Holder) Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", idforge.ErrInvalidArgument, h.Who, fmt.Sprintf(format, args...))
}

// Defaults sets TTL and Timeout, where they are 0, to ttl and timeout,
// the provider's defaults, and MaxDrift to coord.DefaultMaxDrift, and
// checks them: TTL at least 1ms (named ttlName in the message, as the
// provider's Config and URL call it), Timeout and MaxDrift not negative.
func (h *Holder) Defaults(ttlName string, ttl, timeout time.Duration) error {
	h.TTL, h.Timeout = cmp.Or(h.TTL, ttl), cmp.Or(h.Timeout, timeout)
	h.MaxDrift = cmp.Or(h.MaxDrift, coord.DefaultMaxDrift)
	if h.TTL < time.Millisecond {
		return h.Invalid("%s %s is below 1ms", ttlName, h.TTL)
	}
	if h.Timeout < 0 || h.MaxDrift < 0 {
		return h.Invalid("negative timeout %s or max_drift %s", h.Timeout, h.MaxDrift)
	}
	return nil
}

// Start sets the Node from this node's opts (see NewNode), keeping a
// cache if cacheable: if Name tells this coordinator apart from others.
func (h *Holder) Start(opts worker.Options, cacheable bool) {
	h.Node = NewNode(opts, h.Name, cacheable)
}

// A Claim is what a provider's claim found: the ID (−1 when every one
// is held), the newest time recorded for it (unix ms), the clocks of
// the live peers and, when the one ID asked for was held, its owner.
type Claim struct {
	ID, Last int64
	Peers    []coord.Report
	Taken    string
}

// Acquire runs claim, which asks the coordinator for an ID in 0..max,
// recording this node's clock with it. It returns exhausted(what claim
// found) when there was none, gives the ID back and fails when this
// node's clock is too far from its peers' (coord.CheckClock), and else
// starts and caches the lease on the ID. It resumes the cached ID (worker.Resume) when the
// coordinator failed, unless ctx ended.
func (h *Holder) Acquire(ctx context.Context, max int64, claim func(ctx context.Context, max int64) (Claim, error), exhausted func(Claim) error) (worker.Lease, error) {
	sent := h.Clock.Now()
	c, err := claim(ctx, max)
	id, last := c.ID, c.Last
	if err == nil {
		if id < 0 {
			return nil, exhausted(c)
		}
		if err := coord.CheckClock(sent, c.Peers, h.MaxDrift, 0, h.Name); err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.Timeout)
			defer cancel()
			if rerr := h.Release(rctx, id, time.Time{}); rerr != nil {
				h.Logger.Warn(h.Who+": giving the worker ID back failed; it lapses by itself", "worker", id, "err", rerr)
			}
			return nil, fmt.Errorf("%s: %w", h.Who, err)
		}
		rc := h.renewal(id)
		rc.Acquired, rc.LastTime = sent, coord.MsTime(last)
		l := worker.StartRenewal(rc)
		h.Cache.SaveLease(l, h.Logger)
		h.Logger.Debug(h.Who+": worker ID acquired", "worker", id, "owner", h.Owner, "coordinator", h.Name)
		return l, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: acquire at %s: %w", h.Who, h.Name, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", h.Timeout, err)
	}
	rc := h.Resume
	rc.Where, rc.Cause, rc.Max, rc.Renewal = h.Name, err, max, h.renewal
	return h.Node.Resume(rc)
}

// renewal describes the lease on id, but for when it was acquired and the
// time recorded for it.
func (h *Holder) renewal(id int64) worker.RenewalConfig {
	bounded := func(op func(context.Context, int64, time.Time) error) func(context.Context, time.Time) error {
		return func(ctx context.Context, last time.Time) error {
			ctx, cancel := context.WithTimeout(ctx, h.Timeout)
			defer cancel()
			return op(ctx, id, last)
		}
	}
	return worker.RenewalConfig{ID: id, TTL: h.TTL, Renew: bounded(h.Renew), Release: bounded(h.Release),
		Cache: h.Cache, Logger: h.Logger, Clock: h.Clock}
}
