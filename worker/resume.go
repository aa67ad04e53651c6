package worker

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/worker/internal/coord"
)

// ResumeConfig describes a coordinated worker ID to be resumed from the
// local Cache after Acquire could not reach the coordinator.
type ResumeConfig struct {
	// Coordinator names the kind of coordinator in messages: "etcd",
	// "ZooKeeper", "Redis", "the database".
	Coordinator string
	// Where says which one: its servers or its URL without a password.
	Where string
	// Failure says what went wrong, after Coordinator and Where. Default
	// "is unreachable".
	Failure string
	// Cause is the error with which the coordinator failed.
	Cause error
	// Cache is the provider's cache; nil when it keeps none, and NoCache
	// says why. Default "no data directory for a cache".
	Cache   *Cache
	NoCache string
	// Max is the largest worker ID the caller asked for.
	Max int64
	// Then ends the WARN log: what happens once the coordinator answers
	// again ("it is claimed again once etcd answers").
	Then string

	// Renewal, for IDs held for a limited time, returns the renewal of
	// id. Resume sets its Acquired so that the lease is valid exactly
	// until the validity cached (the one the coordinator last granted),
	// and not a moment longer, and its LastTime to the cached time.
	Renewal func(id int64) RenewalConfig
	// Start, for IDs that never expire (cached without a validity limit),
	// returns the lease of id with last, the cached time. It may refuse,
	// for instance when the clock is behind last; Resume returns its
	// error as it is. Set Renewal or Start, not both.
	Start func(id int64, last time.Time) (Lease, error)

	// Logger and Clock default to slog.Default() and idforge.SystemClock.
	Logger *slog.Logger
	Clock  idforge.Clock
}

// Resume continues with the cached worker ID when the coordinator could
// not be reached: if the cache holds an entry for this provider and owner
// that is still valid, of the kind the provider writes (with a validity
// limit for Renewal, without one for Start) and within 0..Max, it starts
// the lease and logs a warning. Otherwise it returns an error wrapping
// idforge.ErrUnavailable and Cause that says why no cached ID can be used
// (wrapping ErrNoCache when there was no usable entry).
func Resume(cfg ResumeConfig) (Lease, error) {
	cfg.Failure = cmp.Or(cfg.Failure, "is unreachable")
	cfg.NoCache = cmp.Or(cfg.NoCache, "no data directory for a cache")
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Clock = cmp.Or(cfg.Clock, idforge.SystemClock)
	fail := func(why error) (Lease, error) {
		return nil, fmt.Errorf("%w: %s at %s %s: %w; no cached worker ID can be used: %w",
			idforge.ErrUnavailable, cfg.Coordinator, cfg.Where, cfg.Failure, cfg.Cause, why)
	}
	if cfg.Cache == nil {
		return fail(errors.New(cfg.NoCache))
	}
	id, until, last, err := cfg.Cache.Load(cfg.Clock.Now())
	expiring := cfg.Renewal != nil
	switch {
	case err != nil:
		return fail(err)
	case expiring && until.IsZero():
		return fail(fmt.Errorf("the cached worker ID %d has no validity limit, which this provider's leases always have", id))
	case !expiring && !until.IsZero():
		return fail(fmt.Errorf("the cached worker ID %d has a validity limit, which this provider's IDs never have", id))
	case id > cfg.Max:
		return fail(fmt.Errorf("the cached worker ID %d does not fit the layout's 0..%d", id, cfg.Max))
	}

	var l Lease
	msg := fmt.Sprintf("%s %s: resuming the cached worker ID %d", cfg.Coordinator, cfg.Failure, id)
	attrs := []any{"worker", id}
	if expiring {
		rc := cfg.Renewal(id).withDefaults()
		rc.Acquired = until.Add(-(rc.TTL - rc.Margin))
		rc.LastTime = last
		l = StartRenewal(rc)
		msg += ", valid until " + coord.FormatTime(until)
		attrs = append(attrs, "valid_until", coord.FormatTime(until))
	} else {
		if l, err = cfg.Start(id, last); err != nil {
			return nil, err
		}
	}
	if cfg.Then != "" {
		msg += "; " + cfg.Then
	}
	attrs = append(attrs, "last_time", coord.FormatTime(last), "coordinator", cfg.Where, "err", cfg.Cause)
	cfg.Logger.Warn(msg, attrs...)
	return l, nil
}
