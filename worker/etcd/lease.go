package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
)

// ownerValue is the JSON value of an {prefix}/id/{n} key.
type ownerValue struct {
	Owner string `json:"owner"`
}

// Acquire claims a worker ID in [0, max]: the one whose key names this
// node's Owner if there is one, else the lowest free one. It returns an
// error wrapping idforge.ErrWorkersExhausted when every ID is held by
// another node, and idforge.ErrUnavailable when etcd does not answer
// within dial_timeout and no cached ID can be resumed.
//
// The lease is a *worker.Renewal; call Release also after its Done
// fired, to close the etcd client.
func (p *Provider) Acquire(ctx context.Context, max int64) (worker.Lease, error) {
	if max < 0 {
		return nil, fmt.Errorf("%w: largest worker ID %d", idforge.ErrInvalidArgument, max)
	}
	cli, err := p.client()
	if err != nil {
		if unreachable(err) {
			return p.resume(nil, max, err)
		}
		return nil, fmt.Errorf("etcd at %s: %w", p.where(), err)
	}
	c := &claim{p: p, cli: cli}
	sent := p.node.Clock.Now()
	// The first request shows whether etcd answers at all.
	gctx, cancel := context.WithTimeout(ctx, p.dialTimeout)
	grant, err := cli.Grant(gctx, int64(p.ttl/time.Second))
	cancel()
	if err != nil {
		if unreachable(err) && !canceled(ctx) {
			return p.resume(cli, max, err)
		}
		cli.Close()
		return nil, fmt.Errorf("etcd at %s: granting a lease: %w", p.where(), err)
	}
	c.lease, c.held = grant.ID, true
	ttl := min(p.ttl, time.Duration(grant.TTL)*time.Second)
	last, retaken, err := c.claim(ctx, max)
	if err == nil {
		err = c.checkClock(ctx, sent)
	}
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), p.dialTimeout)
		cli.Revoke(rctx, grant.ID)
		cancel()
		cli.Close()
		return nil, err
	}
	p.node.Logger.Info("worker ID acquired from etcd", "worker", c.id, "etcd", p.desc, "owner", p.node.Owner,
		"ttl", ttl, "retaken", retaken, "last_time", coord.FormatTime(last))
	rc := c.config(ttl)
	rc.Acquired, rc.LastTime = sent, last
	r := worker.StartRenewal(rc)
	p.node.Cache.SaveLease(r, p.node.Logger)
	return r, nil
}

// client connects to etcd. With a user it also authenticates, which
// needs etcd to answer within dial_timeout.
func (p *Provider) client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   p.endpoints,
		DialTimeout: p.dialTimeout,
		Username:    p.username,
		Password:    p.password,
		TLS:         p.tls,
		Logger:      zap.NewNop(),
	})
}

// resume continues with the cached worker ID when etcd is unreachable.
// cli, when not nil, is kept to claim the ID again once etcd answers;
// when nil, a renewal connects.
func (p *Provider) resume(cli *clientv3.Client, max int64, cause error) (worker.Lease, error) {
	l, err := p.node.Resume(worker.ResumeConfig{
		Coordinator: "etcd",
		Where:       p.where(),
		Cause:       cause,
		Max:         max,
		Then:        "it is claimed again once etcd answers",
		Renewal: func(id int64) worker.RenewalConfig {
			c := &claim{p: p, cli: cli, id: id}
			return c.config(p.ttl)
		},
	})
	if err != nil && cli != nil {
		cli.Close()
	}
	return l, err
}

// claim is one worker ID held (or being claimed) through one client.
// Its methods are called by one goroutine at a time: Acquire, then the
// Renewal's loop, then Release.
type claim struct {
	p *Provider
	// cli is nil until a client could be made (resumed from the cache
	// while etcd was unreachable).
	cli *clientv3.Client
	id  int64
	// lease is the etcd lease the ID key is bound to; 0 when none.
	lease clientv3.LeaseID
	// held tells that this process has held a lease; a claim resumed
	// from the cache has not, and may take over a key that names its
	// Owner but is bound to an earlier process's lease.
	held bool
	// written is the newest time recorded under last/{n}, unix ms.
	written int64
}

// config describes the lease on c's ID, but for when it was acquired and
// the time recorded for it.
func (c *claim) config(ttl time.Duration) worker.RenewalConfig {
	return worker.RenewalConfig{
		ID:      c.id,
		TTL:     ttl,
		Margin:  ttl / 3,
		Renew:   c.renew,
		Release: c.release,
		Cache:   c.p.node.Cache,
		Logger:  c.p.node.Logger,
		Clock:   c.p.node.Clock,
	}
}

// claim binds an ID in [0, max] to c.lease and returns the time recorded
// for it and whether it was taken back from an earlier process of this
// owner.
func (c *claim) claim(ctx context.Context, max int64) (last time.Time, retaken bool, err error) {
	p := c.p
	resp, err := c.cli.Get(ctx, p.prefix+"/id/", clientv3.WithPrefix())
	if err != nil {
		return time.Time{}, false, fmt.Errorf("etcd at %s: listing worker IDs: %w", p.where(), err)
	}
	taken := map[int64]bool{}
	var mine []int64
	revs, leases := map[int64]int64{}, map[int64]int64{}
	for _, kv := range resp.Kvs {
		n, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), p.prefix+"/id/"), 10, 64)
		if err != nil || n < 0 {
			continue // not ours to interpret
		}
		taken[n] = true
		if owner(kv.Value) == p.node.Owner && n <= max {
			mine = append(mine, n)
			revs[n], leases[n] = kv.ModRevision, kv.Lease
		}
	}
	// The same owner is the same node restarting: take its ID back.
	for _, n := range mine {
		t, err := c.bind(ctx, n, clientv3.Compare(clientv3.ModRevision(p.idKey(n)), "=", revs[n]))
		if err != nil {
			return time.Time{}, false, fmt.Errorf("etcd at %s: taking back worker ID %d: %w", p.where(), n, err)
		}
		if t.Succeeded {
			c.id = n
			if old := clientv3.LeaseID(leases[n]); old != 0 {
				c.cli.Revoke(ctx, old) // the earlier process's lease: best effort
			}
			last, err := c.readLast(t.Responses[1].GetResponseRange())
			return last, true, err
		}
	}
	for n := int64(0); n <= max; n++ {
		if taken[n] {
			continue
		}
		t, err := c.bind(ctx, n, clientv3.Compare(clientv3.CreateRevision(p.idKey(n)), "=", 0))
		if err != nil {
			return time.Time{}, false, fmt.Errorf("etcd at %s: claiming worker ID %d: %w", p.where(), n, err)
		}
		if t.Succeeded {
			c.id = n
			last, err := c.readLast(t.Responses[1].GetResponseRange())
			return last, false, err
		}
	}
	return time.Time{}, false, fmt.Errorf("%w: all %d worker IDs under etcd prefix %s are taken (0..%d); a stopped node's ID frees when its lease of up to %s expires",
		idforge.ErrWorkersExhausted, max+1, p.prefix, max, p.ttl)
}

// bind binds ID n's key to c.lease if cmp holds, and reads n's last time
// in the same transaction.
func (c *claim) bind(ctx context.Context, n int64, cmp clientv3.Cmp) (*clientv3.TxnResponse, error) {
	return c.cli.Txn(ctx).If(cmp).
		Then(clientv3.OpPut(c.p.idKey(n), c.value(), clientv3.WithLease(c.lease)), clientv3.OpGet(c.p.lastKey(n)), c.putClock(n)).
		Commit()
}

// putClock records this node's clock under clock/{n}, bound to c.lease.
func (c *claim) putClock(n int64) clientv3.Op {
	return clientv3.OpPut(c.p.clockKey(n), strconv.FormatInt(c.p.node.Clock.Now().UnixMilli(), 10), clientv3.WithLease(c.lease))
}

// checkClock compares now with the clocks the other live holders
// recorded (coord.CheckClock). etcd keeps no clock of the writes: a
// record is up to a TTL old, the slack.
func (c *claim) checkClock(ctx context.Context, now time.Time) error {
	p := c.p
	resp, err := c.cli.Get(ctx, p.prefix+"/clock/", clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("etcd at %s: reading the peers' clocks: %w", p.where(), err)
	}
	var peers []coord.Report
	for _, kv := range resp.Kvs {
		ms, err := strconv.ParseInt(string(kv.Value), 10, 64)
		if err == nil && ms > 0 && string(kv.Key) != p.clockKey(c.id) {
			peers = append(peers, coord.Report{At: ms})
		}
	}
	return coord.CheckClock(now, peers, p.maxDrift, p.ttl, p.prefix+"/clock")
}

func (c *claim) value() string {
	b, _ := json.Marshal(ownerValue{Owner: c.p.node.Owner})
	return string(b)
}

func owner(value []byte) string {
	var v ownerValue
	if json.Unmarshal(value, &v) != nil {
		return ""
	}
	return v.Owner
}

// readLast parses the value of a last/{n} key and remembers it as
// written.
func (c *claim) readLast(r *pb.RangeResponse) (time.Time, error) {
	ms, _, err := c.parseLast(r)
	if err != nil || ms == 0 {
		return time.Time{}, err
	}
	c.written = ms
	return time.UnixMilli(ms), nil
}

func (c *claim) parseLast(r *pb.RangeResponse) (ms, rev int64, err error) {
	kvs := r.Kvs
	if len(kvs) == 0 {
		return 0, 0, nil
	}
	ms, err = strconv.ParseInt(string(kvs[0].Value), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("etcd key %s holds %q, want unix milliseconds", kvs[0].Key, kvs[0].Value)
	}
	return ms, kvs[0].ModRevision, nil
}

// renew keeps the ID for this node for another TTL and records last. It
// fails while another node holds the ID.
func (c *claim) renew(ctx context.Context, last time.Time) error {
	if c.cli == nil {
		cli, err := c.p.client()
		if err != nil {
			return fmt.Errorf("etcd at %s: %w", c.p.where(), err)
		}
		c.cli = cli
	}
	if c.lease != 0 {
		_, err := c.cli.KeepAliveOnce(ctx, c.lease)
		switch {
		case err == nil:
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			c.p.node.Logger.Warn("the etcd lease of the worker ID is gone; claiming the ID again", "worker", c.id, "lease", int64(c.lease))
			c.lease = 0
		default:
			return fmt.Errorf("etcd at %s: keeping the lease alive: %w", c.p.where(), err)
		}
	}
	if err := c.hold(ctx); err != nil {
		return err
	}
	return c.recordLast(ctx, last)
}

// hold makes sure the ID key exists bound to c.lease, granting a lease
// when there is none. It binds the key anew only when the key is gone, or
// when it names this owner and this process never held it (resumed from
// the cache): then it is an earlier process of this node.
func (c *claim) hold(ctx context.Context) error {
	p := c.p
	if c.lease == 0 {
		g, err := c.cli.Grant(ctx, int64(p.ttl/time.Second))
		if err != nil {
			return fmt.Errorf("etcd at %s: granting a lease: %w", p.where(), err)
		}
		c.lease = g.ID
	}
	key := p.idKey(c.id)
	for range 3 {
		t, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.LeaseValue(key), "=", c.lease)).
			Then(c.putClock(c.id)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil {
			return fmt.Errorf("etcd at %s: checking worker ID %d: %w", p.where(), c.id, err)
		}
		if t.Succeeded {
			c.held = true
			return nil
		}
		kvs := t.Responses[0].GetResponseRange().Kvs
		var cmp clientv3.Cmp
		var old clientv3.LeaseID
		switch {
		case len(kvs) == 0:
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		case owner(kvs[0].Value) == p.node.Owner && !c.held:
			cmp = clientv3.Compare(clientv3.ModRevision(key), "=", kvs[0].ModRevision)
			old = clientv3.LeaseID(kvs[0].Lease)
		default:
			return fmt.Errorf("%w: worker ID %d under etcd prefix %s is now held by %s", idforge.ErrLeaseLost, c.id, p.prefix, kvs[0].Value)
		}
		t, err = c.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, c.value(), clientv3.WithLease(c.lease)), c.putClock(c.id)).Commit()
		if err != nil {
			return fmt.Errorf("etcd at %s: claiming worker ID %d again: %w", p.where(), c.id, err)
		}
		if t.Succeeded {
			c.held = true
			p.node.Logger.Info("worker ID claimed again in etcd", "worker", c.id, "lease", int64(c.lease))
			if old != 0 && old != c.lease {
				c.cli.Revoke(ctx, old) // the earlier process's lease: best effort
			}
			return nil
		}
	}
	return fmt.Errorf("etcd at %s: worker ID %d kept changing while claiming it again", p.where(), c.id)
}

// recordLast raises last/{n} to last unless it holds a newer time.
func (c *claim) recordLast(ctx context.Context, last time.Time) error {
	if last.IsZero() || last.UnixMilli() <= c.written {
		return nil
	}
	ms := last.UnixMilli()
	key := c.p.lastKey(c.id)
	g, err := c.cli.Get(ctx, key)
	r := (*pb.RangeResponse)(g)
	for range 5 {
		if err != nil {
			return fmt.Errorf("etcd at %s: recording the last time of worker ID %d: %w", c.p.where(), c.id, err)
		}
		cur, rev, perr := c.parseLast(r)
		if perr != nil {
			return perr
		}
		if cur >= ms {
			c.written = cur
			return nil
		}
		var t *clientv3.TxnResponse
		t, err = c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, strconv.FormatInt(ms, 10))).
			Else(clientv3.OpGet(key)).
			Commit()
		if err == nil && t.Succeeded {
			c.written = ms
			return nil
		}
		if err == nil {
			r = t.Responses[0].GetResponseRange()
		}
	}
	if err != nil {
		return fmt.Errorf("etcd at %s: recording the last time of worker ID %d: %w", c.p.where(), c.id, err)
	}
	return fmt.Errorf("etcd at %s: key %s kept changing while recording the last time", c.p.where(), key)
}

// release records last, revokes the lease and closes the client. It is
// bounded by the TTL: after that the lease has expired anyway.
func (c *claim) release(ctx context.Context, last time.Time) error {
	if c.cli == nil {
		return fmt.Errorf("etcd at %s is unreachable: the last time of worker ID %d was not recorded", c.p.where(), c.id)
	}
	defer c.cli.Close()
	ctx, cancel := context.WithTimeout(ctx, c.p.ttl)
	defer cancel()
	err := c.recordLast(ctx, last)
	if c.lease != 0 {
		if _, rerr := c.cli.Revoke(ctx, c.lease); rerr != nil && !errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
			err = errors.Join(err, fmt.Errorf("etcd at %s: revoking the lease of worker ID %d: %w", c.p.where(), c.id, rerr))
		}
		c.lease = 0
	}
	return err
}

// where names the endpoints for messages.
func (p *Provider) where() string {
	return strings.Join(p.endpoints, ",")
}

// unreachable tells errors that mean etcd did not answer.
func unreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if s, ok := status.FromError(err); ok {
		return s.Code() == codes.Unavailable || s.Code() == codes.DeadlineExceeded
	}
	return false
}

func canceled(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
