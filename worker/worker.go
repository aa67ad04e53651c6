// Package worker provides snowflake worker IDs.
//
// A snowflake ID is unique only if no two live nodes share a worker ID and
// no node reuses time. A Provider hands this node a worker ID as a Lease:
//
//   - ValidUntil bounds when the node may issue with the ID. A
//     coordinator-backed lease renews itself in the background, and each
//     renewal moves ValidUntil to a point safely before the coordinator
//     could give the ID to another node. The snowflake generator checks it
//     before every ID, so a node whose renewals fail (or that was frozen
//     past its lease) stops issuing before anyone else can start: fencing.
//   - LastTime is the newest time an earlier holder of the ID recorded;
//     the node must not issue at or before it. Report feeds the node's
//     own newest time back, for the next holder.
//
// The local providers, static (a number) and file, never expire; keeping
// them distinct across nodes is the operator's job. Coordinated providers
// (etcd, ZooKeeper, Redis, SQL) register themselves with Register from
// their own packages; kubernetes (the StatefulSet ordinal) and ip (the
// low bits of an IPv4 address, IP, unchecked unless a SQL provider holds
// it) live here. Every coordinated provider records its holder's clock
// and refuses a start more than max_drift from the live holders' clocks.
// They build on StartRenewal (a lease kept by renewing it), Cache and
// Resume (the fallback to the cached ID when the coordinator is
// unreachable), and all pass the conformance suite in package workertest.
//
// Supervise keeps what issues with a worker ID on a live lease: when a
// lease is lost it acquires another and rebinds the generator to it.
package worker

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/idforge/idforge"
)

// A Lease is a worker ID held by this node.
type Lease interface {
	// ID returns the worker ID.
	ID() int64
	// ValidUntil returns the time until which this node may issue with
	// the ID. The zero Time means without limit.
	ValidUntil() time.Time
	// LastTime returns the newest time earlier holders of the ID recorded
	// at the coordinator; the node must not issue at or before it. Zero
	// when unknown.
	LastTime() time.Time
	// Report tells the lease the newest time this node has issued at, to
	// be recorded at the coordinator with the next renewal.
	Report(t time.Time)
	// Done is closed when the lease has ended: it could not be renewed in
	// time, or it was released. It is nil for leases that never end.
	Done() <-chan struct{}
	// Release gives the ID back. It is idempotent.
	Release(ctx context.Context) error
}

// A Provider assigns worker IDs.
type Provider interface {
	// Acquire returns a lease on a worker ID in [0, max]. It returns an
	// error wrapping idforge.ErrInvalidWorker when a configured ID does
	// not fit, and idforge.ErrWorkersExhausted when every ID is taken.
	Acquire(ctx context.Context, max int64) (Lease, error)
	// Describe says where IDs come from, for logs.
	Describe() string
}

// Options are what every provider may need besides its URL.
type Options struct {
	// Owner identifies this node to a coordinator, as "host:port" of its
	// listener. A node restarting with the same Owner gets its worker ID
	// back at once; another node only after the old lease expired.
	Owner string
	// DataDir is the node's data directory: the file provider's default
	// file and every coordinated provider's local cache live there.
	DataDir string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock defaults to idforge.SystemClock.
	Clock idforge.Clock
}

// WithDefaults returns o with its defaults filled in: slog.Default() for
// a nil Logger and idforge.SystemClock for a nil Clock. Open applies it
// before calling an Opener; providers built directly apply it too.
func (o Options) WithDefaults() Options {
	o.Logger = cmp.Or(o.Logger, slog.Default())
	o.Clock = cmp.Or(o.Clock, idforge.SystemClock)
	return o
}

// fixedLease is a lease that never ends: static, file, kubernetes.
type fixedLease int64

func (l fixedLease) ID() int64                         { return int64(l) }
func (l fixedLease) ValidUntil() time.Time             { return time.Time{} }
func (l fixedLease) LastTime() time.Time               { return time.Time{} }
func (l fixedLease) Report(time.Time)                  {}
func (l fixedLease) Done() <-chan struct{}             { return nil }
func (l fixedLease) Release(ctx context.Context) error { return nil }
