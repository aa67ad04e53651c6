package redis

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
	"github.com/idforge/idforge/worker/internal/holder"
)

// Defaults for the Config fields left zero.
const (
	DefaultPrefix  = "idforge:workers"
	DefaultTTL     = 10 * time.Second
	DefaultTimeout = 3 * time.Second
)

// Config says where and how worker IDs are held. The zero value of every
// field but Client means its default.
type Config struct {
	// Client is the Redis connection. Required. A cluster client works:
	// all keys of a prefix are in one slot. The Provider does not close
	// a Client it was given.
	Client goredis.UniversalClient
	// Prefix starts every key (see the package doc); it must not contain
	// '{' or '}'. Default DefaultPrefix.
	Prefix string
	// TTL is the expiry of an ID's key, renewed every TTL/3; the lease
	// is valid until 2/3 TTL after the newest successful renewal was
	// sent. Whole milliseconds, at least 1ms. Default DefaultTTL.
	TTL time.Duration
	// Timeout bounds every call to Redis. Default DefaultTimeout.
	Timeout time.Duration
	// Name identifies the Redis server and prefix in Describe and in the
	// local cache, whose entries are only used by a provider of the same
	// Name. The opener uses the URL without its password. Default: the
	// address and database of a *goredis.Client or the addresses of a
	// *goredis.ClusterClient, with the prefix; for other clients no
	// cache is kept unless Name is set.
	Name string
	// MinReplicas is how many replicas must have an acquired or renewed
	// key before the node counts on it (Redis's WAIT): an acquire or
	// renewal that fewer replicas acknowledged fails, so that a
	// fail-over cannot lose a key this node issues under. 0, the
	// default, waits for none; with Sentinel or a cluster set 1 or more.
	MinReplicas int
	// WaitTimeout bounds the wait for replicas. Default 500ms.
	WaitTimeout time.Duration
	// MaxDrift is the largest difference from the live peers' average
	// clock (each node records its clock with every renewal) that
	// Acquire accepts. Default 5s.
	MaxDrift time.Duration
}

// Provider is a worker.Provider holding IDs in Redis. It is safe for
// concurrent use. Create it with New (or worker.Open with a redis:// URL)
// and Close it after releasing its leases.
type Provider struct {
	held   holder.Holder
	client goredis.UniversalClient
	w      redisconn.Writer
	prefix string
	base   string // "{prefix}:"
}

var (
	_ worker.Provider            = (*Provider)(nil)
	_ interface{ Close() error } = (*Provider)(nil)
)

// New returns a Provider for cfg and this node's opts. It does not
// contact Redis: Acquire does. When opts.Owner is empty, a random owner
// unique to this process is used, so a restarted node gets a new ID (or
// its old one after the TTL) and cannot resume from the cache. It returns
// an error wrapping idforge.ErrInvalidArgument for a nil Client, a prefix
// with '{' or '}', a TTL under 1ms or a negative Timeout.
func New(cfg Config, opts worker.Options) (*Provider, error) {
	p := &Provider{client: cfg.Client, prefix: cmp.Or(cfg.Prefix, DefaultPrefix)}
	p.held = holder.Holder{
		Who:      "redis worker",
		TTL:      cfg.TTL,
		Timeout:  cfg.Timeout,
		MaxDrift: cfg.MaxDrift,
		Renew:    p.renew,
		Release:  p.release,
		Resume: worker.ResumeConfig{
			Coordinator: "Redis",
			NoCache:     "none is kept without a data directory (and, for a client given to New, a Config.Name)",
			Then:        "a renewal re-establishes its key once Redis answers",
		},
	}
	if cfg.Client == nil {
		return nil, p.held.Invalid("no client")
	}
	if strings.ContainsAny(p.prefix, "{}") {
		return nil, p.held.Invalid("prefix %q contains '{' or '}'; the provider adds the hash tag itself", p.prefix)
	}
	if err := p.held.Defaults("ttl", DefaultTTL, DefaultTimeout); err != nil {
		return nil, err
	}
	p.held.TTL = p.held.TTL.Truncate(time.Millisecond)
	if cfg.WaitTimeout = cmp.Or(cfg.WaitTimeout, redisconn.DefaultWaitTimeout); cfg.MinReplicas < 0 || cfg.WaitTimeout < time.Millisecond {
		return nil, p.held.Invalid("negative min replicas %d or wait timeout %s under 1ms", cfg.MinReplicas, cfg.WaitTimeout)
	}
	known := true
	if p.held.Name = cfg.Name; cfg.Name == "" {
		p.held.Name, known = describeClient(cfg.Client)
		p.held.Name += "?prefix=" + p.prefix
	}
	p.base = "{" + p.prefix + "}:"
	p.w = redisconn.Writer{Client: cfg.Client, Replication: redisconn.Replication{MinReplicas: cfg.MinReplicas, Timeout: cfg.WaitTimeout}}
	p.held.Start(opts, known)
	return p, nil
}

// describeClient names the server(s) of a client, for Describe and the
// cache; ok is false when it cannot tell servers apart.
func describeClient(c goredis.UniversalClient) (name string, ok bool) {
	switch c := c.(type) {
	case *goredis.Client:
		o := c.Options()
		return fmt.Sprintf("redis://%s/%d", o.Addr, o.DB), true
	case *goredis.ClusterClient:
		return "redis-cluster://" + strings.Join(c.Options().Addrs, ","), true
	}
	return fmt.Sprintf("redis (%T)", c), false
}

// Describe says where worker IDs come from, for logs.
func (p *Provider) Describe() string {
	return fmt.Sprintf("Redis worker IDs at %s (keys %sid:N, TTL %s)", p.held.Name, p.base, p.held.TTL)
}

// Close closes the Redis client if the Provider opened it (from a URL).
// Leases still held stop being renewed and end within their validity. It
// is idempotent.
func (p *Provider) Close() error {
	return p.held.Owned.Close()
}

func (p *Provider) key(kind string, id int64) string {
	return p.base + kind + ":" + strconv.FormatInt(id, 10)
}

// Acquire claims a worker ID in [0, max]: the one this owner already
// holds, else the lowest free one, and returns its lease, renewed in the
// background until Release or until a renewal comes too late. It returns
// an error wrapping
//
//   - idforge.ErrInvalidArgument when max is negative;
//   - idforge.ErrWorkersExhausted when other owners hold every ID 0..max;
//   - idforge.ErrClockMovedBackwards when this node's clock is more than
//     MaxDrift from the live peers' average;
//   - idforge.ErrUnavailable when Redis cannot be reached and no cached ID
//     can be resumed (see the package doc).
func (p *Provider) Acquire(ctx context.Context, max int64) (worker.Lease, error) {
	if max < 0 {
		return nil, p.held.Invalid("max worker ID %d is negative", max)
	}
	return p.held.Acquire(ctx, max, p.claim, func(holder.Claim) error {
		return fmt.Errorf("%w: redis worker: all %d worker IDs 0..%d under prefix %q are held by other nodes",
			idforge.ErrWorkersExhausted, max+1, max, p.prefix)
	})
}

// claim runs the acquire script: the ID this owner holds, else the lowest
// free one, else −1, with the clocks the other holders last recorded.
func (p *Provider) claim(ctx context.Context, max int64) (holder.Claim, error) {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	cmd, err := p.w.Eval(ctx, acquireScript, []string{p.key("id", 0)},
		p.base, p.held.Owner, max, p.held.TTL.Milliseconds(), p.clock())
	if err != nil {
		// A key the script set but replicas lack stays on the primary
		// until its TTL: the ID is idle for a while, never held twice.
		return holder.Claim{}, err
	}
	res, err := cmd.StringSlice()
	if err != nil {
		return holder.Claim{}, err
	}
	return parseAcquire(res)
}

// clock is the value of a clock:N key: this node's clock and the TTL the
// key is set with, both in ms, so that a reader knows the key's age from
// its PTTL.
func (p *Provider) clock() string {
	return fmt.Sprintf("%d:%d", p.held.Clock.Now().UnixMilli(), p.held.TTL.Milliseconds())
}

// parseAcquire decodes acquireScript's {id, last, clock, pttl, …}.
func parseAcquire(res []string) (c holder.Claim, err error) {
	if len(res) < 2 || len(res)%2 != 0 {
		return c, fmt.Errorf("unexpected reply %q from the acquire script", res)
	}
	c.ID, err = strconv.ParseInt(res[0], 10, 64)
	if err == nil {
		c.Last, err = strconv.ParseInt(res[1], 10, 64)
	}
	for i := 2; err == nil && i < len(res); i += 2 {
		var at, ttl, pttl int64
		if _, serr := fmt.Sscanf(res[i]+" "+res[i+1], "%d:%d %d", &at, &ttl, &pttl); serr != nil {
			return c, fmt.Errorf("unexpected clock record %q (PTTL %s) from the acquire script", res[i], res[i+1])
		}
		c.Peers = append(c.Peers, coord.Report{At: at, Age: ttl - pttl})
	}
	if err != nil {
		return c, fmt.Errorf("unexpected reply %q from the acquire script", res)
	}
	return c, nil
}

// renew keeps id's key for another TTL and records last on it.
func (p *Provider) renew(ctx context.Context, id int64, last time.Time) error {
	idKey := p.key("id", id)
	cmd, err := p.w.Eval(ctx, renewScript, []string{idKey, p.key("last", id), p.key("clock", id)},
		p.held.Owner, p.held.TTL.Milliseconds(), coord.UnixMs(last), p.clock())
	var res []string
	if err == nil {
		res, err = cmd.StringSlice()
	}
	if err != nil {
		return fmt.Errorf("redis worker: renew worker ID %d: %w", id, err)
	}
	switch {
	case len(res) == 1 && res[0] == "ok":
		return nil
	case len(res) == 1 && res[0] == "retaken":
		p.held.Logger.Info("redis worker: the key of the worker ID had lapsed and nobody took it; it is set again",
			"worker", id, "key", idKey)
		return nil
	case len(res) == 2 && res[0] == "held":
		return fmt.Errorf("%w: redis worker: worker ID %d is held by %q", idforge.ErrLeaseLost, id, res[1])
	case len(res) == 2 && res[0] == "newer":
		return fmt.Errorf("%w: redis worker: worker ID %d expired, and a holder since recorded the newer time %s",
			idforge.ErrLeaseLost, id, res[1])
	}
	return fmt.Errorf("redis worker: renew worker ID %d: unexpected reply %q", id, res)
}

// release gives id back, recording last.
func (p *Provider) release(ctx context.Context, id int64, last time.Time) error {
	err := releaseScript.Run(ctx, p.client, []string{p.key("id", id), p.key("last", id), p.key("clock", id)}, p.held.Owner, coord.UnixMs(last)).Err()
	if err != nil {
		return fmt.Errorf("redis worker: release worker ID %d: %w", id, err)
	}
	return nil
}
