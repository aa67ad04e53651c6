package zookeeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
)

// endpoint is the data of Leaf's forever and temporary nodes.
type endpoint struct {
	IP        string `json:"ip"`
	Port      string `json:"port"`
	Timestamp int64  `json:"timestamp"`
}

// stamp is the part of a node's data that idforge reads; lenient about
// the rest, which other Leaf implementations may write differently.
type stamp struct {
	Timestamp int64 `json:"timestamp"`
}

func (p *Provider) data(ms int64) []byte {
	b, _ := json.Marshal(endpoint{IP: p.ip, Port: p.port, Timestamp: ms})
	return b
}

var acl = zk.WorldACL(zk.PermAll)

// errUnreachable marks a failure to get a session in time.
var errUnreachable = errors.New("no session within dial_timeout")

// Acquire takes this node's Leaf worker ID back, or registers a new one.
// It returns an error wrapping idforge.ErrWorkersExhausted when the
// sequence number is past max, idforge.ErrClockMovedBackwards when a
// clock check fails, and idforge.ErrUnavailable when ZooKeeper gives no
// session within dial_timeout and no cached ID can be resumed.
func (p *Provider) Acquire(ctx context.Context, max int64) (worker.Lease, error) {
	if max < 0 {
		return nil, fmt.Errorf("%w: largest worker ID %d", idforge.ErrInvalidArgument, max)
	}
	conn, err := p.connect(ctx)
	if err != nil {
		if conn == nil || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return p.resume(conn, max, err)
	}
	var l *lease
	err = within(ctx, conn, func() (err error) {
		l, err = p.register(conn, max)
		return err
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	go l.run()
	return l, nil
}

// connect opens a session. On a timeout it returns the connection, which
// keeps trying in the background, with an error wrapping errUnreachable.
func (p *Provider) connect(ctx context.Context) (*zk.Conn, error) {
	conn, events, err := zk.Connect(p.servers, p.sessionTimeout,
		zk.WithLogger(zkLogger{p.node.Logger}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper at %s: %w", p.where(), err)
	}
	timer := time.NewTimer(p.dialTimeout)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State != zk.StateHasSession {
				continue
			}
			go p.watch(events)
			if p.auth != nil {
				if err := conn.AddAuth("digest", p.auth); err != nil {
					conn.Close()
					return nil, fmt.Errorf("ZooKeeper at %s: digest authentication: %w", p.where(), err)
				}
			}
			return conn, nil
		case <-timer.C:
			go p.watch(events)
			return conn, errUnreachable
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				conn.Close()
				return nil, ctx.Err()
			}
			go p.watch(events)
			return conn, fmt.Errorf("%w: %w", errUnreachable, ctx.Err())
		}
	}
}

// watch logs session changes until the connection is closed.
func (p *Provider) watch(events <-chan zk.Event) {
	for ev := range events {
		switch ev.State {
		case zk.StateExpired:
			p.node.Logger.Warn("ZooKeeper session expired; the temporary node is created again with a new session", "zookeeper", p.desc)
		case zk.StateHasSession:
			p.node.Logger.Debug("ZooKeeper session established", "zookeeper", p.desc, "server", ev.Server)
		}
	}
}

// within runs fn, closing conn (which fails fn's requests) when ctx ends.
func within(ctx context.Context, conn *zk.Conn, fn func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		conn.Close()
		<-errc
		return ctx.Err()
	}
}

// register runs Leaf's start-up: find or create the forever node, check
// the clock against it and against the live peers, and create the
// temporary node.
func (p *Provider) register(conn *zk.Conn, max int64) (*lease, error) {
	for _, dir := range []string{"/snowflake", p.Base(), p.foreverDir(), p.temporaryDir()} {
		if _, err := conn.Create(dir, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return nil, fmt.Errorf("ZooKeeper at %s: creating %s: %w", p.where(), dir, err)
		}
	}
	children, _, err := conn.Children(p.foreverDir())
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper at %s: listing %s: %w", p.where(), p.foreverDir(), err)
	}
	seq, node := int64(-1), ""
	for _, c := range children {
		if n, ok := p.sequenceOf(c); ok && (seq < 0 || n < seq) {
			seq, node = n, p.foreverDir()+"/"+c
		}
	}
	var last time.Time
	if seq >= 0 {
		// Leaf: registered before, so take the worker ID back, unless the
		// clock is behind the time this node last reported.
		b, _, err := conn.Get(node)
		if err != nil {
			return nil, fmt.Errorf("ZooKeeper at %s: reading %s: %w", p.where(), node, err)
		}
		var s stamp
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("ZooKeeper node %s holds %q, not Leaf's JSON: %w", node, b, err)
		}
		if s.Timestamp > 0 {
			last = time.UnixMilli(s.Timestamp)
		}
		if now := p.node.Clock.Now(); last.After(now) {
			return nil, fmt.Errorf("%w: the clock is %s behind the time this node last reported to ZooKeeper (%s in %s); refusing to start until it has caught up",
				idforge.ErrClockMovedBackwards, last.Sub(now).Round(time.Millisecond), coord.FormatTime(last), node)
		}
		if seq > max {
			return nil, p.exhausted(seq, node, max)
		}
	}

	t0 := p.node.Clock.Now()
	temp := p.temporaryPath()
	if err := createEphemeral(conn, temp, p.data(t0.UnixMilli())); err != nil {
		return nil, fmt.Errorf("ZooKeeper at %s: creating %s: %w", p.where(), temp, err)
	}
	ok, st, err := conn.Exists(temp)
	if err == nil && !ok {
		err = zk.ErrNoNode
	}
	if err == nil {
		err = p.checkPeers(conn, t0, st.Mtime)
	}
	if err != nil {
		conn.Delete(temp, -1)
		return nil, err
	}

	if seq < 0 {
		// Leaf: not registered, so create a persistent sequential node; its
		// sequence number is the worker ID.
		path, err := conn.Create(p.foreverDir()+"/"+p.node.Owner+"-", p.data(t0.UnixMilli()), zk.FlagSequence, acl)
		if err != nil {
			conn.Delete(temp, -1)
			return nil, fmt.Errorf("ZooKeeper at %s: creating the forever node: %w", p.where(), err)
		}
		n, ok := p.sequenceOf(path[strings.LastIndexByte(path, '/')+1:])
		if !ok {
			conn.Delete(temp, -1)
			return nil, fmt.Errorf("ZooKeeper created %s, which ends in no sequence number", path)
		}
		if n > max {
			conn.Delete(path, -1)
			conn.Delete(temp, -1)
			return nil, p.exhausted(n, path, max)
		}
		seq, node = n, path
		p.node.Logger.Info("Leaf worker ID registered in ZooKeeper", "worker", seq, "node", node)
	} else {
		p.node.Logger.Info("Leaf worker ID taken back from ZooKeeper", "worker", seq, "node", node, "last_time", coord.FormatTime(last))
	}
	l := newLease(p, conn, seq, node, last)
	if err := l.write(false); err != nil {
		p.node.Logger.Warn("recording this node's time in ZooKeeper failed", "worker", seq, "err", err)
	}
	return l, nil
}

// sequenceOf returns the sequence number of a forever node's name if the
// node belongs to this owner.
func (p *Provider) sequenceOf(name string) (int64, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || name[:i] != p.node.Owner {
		return 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	return n, err == nil && n >= 0
}

func (p *Provider) exhausted(seq int64, node string, max int64) error {
	return fmt.Errorf("%w: ZooKeeper numbered this node's forever node %s %d, past the layout's largest worker ID %d. "+
		"Leaf-style IDs are never reused: each new host:port takes the next number, and ZooKeeper's sequence only grows, "+
		"so deleting stale forever nodes does not bring numbers back; give the layout more worker bits, "+
		"or stop every node and delete %s so that they are numbered afresh",
		idforge.ErrWorkersExhausted, node, seq, max, p.foreverDir())
}

// createEphemeral creates this node's temporary node, replacing one left
// by an earlier session of the same owner (a restart within the session
// timeout).
func createEphemeral(conn *zk.Conn, path string, data []byte) error {
	_, err := conn.Create(path, data, zk.FlagEphemeral, acl)
	if errors.Is(err, zk.ErrNodeExists) {
		if err := conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = conn.Create(path, data, zk.FlagEphemeral, acl)
	}
	return err
}

// checkPeers compares this node's clock, read at t0 when its temporary
// node was written at ZooKeeper time zkNow (unix ms), with the average
// clock of the other live nodes.
func (p *Provider) checkPeers(conn *zk.Conn, t0 time.Time, zkNow int64) error {
	dir := p.temporaryDir()
	children, _, err := conn.Children(dir)
	if err != nil {
		return fmt.Errorf("ZooKeeper at %s: listing %s: %w", p.where(), dir, err)
	}
	stale := (2*ReportInterval + p.sessionTimeout).Milliseconds()
	var peers []coord.Report
	for _, c := range children {
		if c == p.node.Owner {
			continue
		}
		b, st, err := conn.Get(dir + "/" + c)
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone meanwhile
		}
		if err != nil {
			return fmt.Errorf("ZooKeeper at %s: reading %s/%s: %w", p.where(), dir, c, err)
		}
		var s stamp
		if json.Unmarshal(b, &s) != nil || s.Timestamp <= 0 {
			p.node.Logger.Debug("ignoring a temporary node without Leaf's JSON", "node", dir+"/"+c)
			continue
		}
		// The peer's clock now: its report plus the time since it wrote,
		// unless it has not written for too long: not a live peer.
		if age := max(zkNow-st.Mtime, 0); age <= stale {
			peers = append(peers, coord.Report{At: s.Timestamp, Age: age})
		}
	}
	return coord.CheckClock(t0, peers, p.maxDrift, 0, dir)
}

// resume continues with the cached worker ID while ZooKeeper is
// unreachable; conn keeps trying in the background and the reports start
// once it has a session.
func (p *Provider) resume(conn *zk.Conn, max int64, cause error) (worker.Lease, error) {
	l, err := p.node.Resume(worker.ResumeConfig{
		Coordinator: "ZooKeeper",
		Where:       p.where(),
		Cause:       cause,
		Max:         max,
		Then:        "the peers' clocks cannot be checked, and the reports resume once ZooKeeper answers",
		Start: func(id int64, last time.Time) (worker.Lease, error) {
			if now := p.node.Clock.Now(); last.After(now) {
				return nil, fmt.Errorf("%w: the clock is %s behind the time this node last recorded (%s, in its worker ID cache; ZooKeeper at %s is unreachable); refusing to start until it has caught up",
					idforge.ErrClockMovedBackwards, last.Sub(now).Round(time.Millisecond), coord.FormatTime(last), p.where())
			}
			l := newLease(p, conn, id, p.foreverPath(id), last)
			l.write(false) // at least the cache
			go l.run()
			return l, nil
		},
	})
	if err != nil {
		conn.Close()
	}
	return l, err
}

// lease is a Leaf worker ID: bound to this host:port for good, so it
// never ends; a goroutine reports the node's time every ReportInterval.
type lease struct {
	p        *Provider
	conn     *zk.Conn
	id       int64
	forever  string
	last     time.Time
	reported atomic.Int64 // unix ms
	stop     chan struct{}
	exited   chan struct{}
	once     sync.Once
	err      error
}

var _ worker.Lease = (*lease)(nil)

func newLease(p *Provider, conn *zk.Conn, id int64, forever string, last time.Time) *lease {
	l := &lease{p: p, conn: conn, id: id, forever: forever, last: last,
		stop: make(chan struct{}), exited: make(chan struct{})}
	if !last.IsZero() {
		l.reported.Store(last.UnixMilli())
	}
	return l
}

// ID returns the worker ID, the forever node's sequence number.
func (l *lease) ID() int64 { return l.id }

// ValidUntil is zero: the ID is bound to this host:port for good.
func (l *lease) ValidUntil() time.Time { return time.Time{} }

// LastTime returns the timestamp found in the forever node at start (or
// in the cache, when ZooKeeper was unreachable).
func (l *lease) LastTime() time.Time { return l.last }

// Done is nil: the lease never ends.
func (l *lease) Done() <-chan struct{} { return nil }

// Report records the newest time this node issued at, for the next
// write to ZooKeeper and the cache.
func (l *lease) Report(t time.Time) { atomicmax.Raise(&l.reported, t.UnixMilli()) }

// run writes the node's time every ReportInterval until Release.
func (l *lease) run() {
	defer close(l.exited)
	tick := time.NewTicker(ReportInterval)
	defer tick.Stop()
	failures := 0
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if err := l.write(false); err != nil {
			failures++
			if failures == 1 || failures%100 == 0 {
				l.p.node.Logger.Warn("reporting this node's time to ZooKeeper failed", "worker", l.id, "attempt", failures, "err", err)
			}
			continue
		}
		if failures > 0 {
			l.p.node.Logger.Info("reporting this node's time to ZooKeeper recovered", "worker", l.id, "failed_attempts", failures)
		}
		failures = 0
	}
}

// write records max(now, newest reported) in the cache and, with a
// session, in the forever node and the temporary node, which final
// deletes instead.
func (l *lease) write(final bool) error {
	p := l.p
	ms := max(p.node.Clock.Now().UnixMilli(), l.reported.Load())
	if p.node.Cache != nil {
		if err := p.node.Cache.Save(l.id, time.Time{}, time.UnixMilli(ms)); err != nil {
			p.node.Logger.Warn("saving the worker ID cache failed", "err", err)
		}
	}
	if l.conn.State() != zk.StateHasSession {
		return fmt.Errorf("ZooKeeper at %s: no session (%s): the time %s is recorded in the local cache only",
			p.where(), l.conn.State(), coord.FormatTime(time.UnixMilli(ms)))
	}
	data := p.data(ms)
	if _, err := l.conn.Set(l.forever, data, -1); err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("the forever node %s is gone: worker ID %d is no longer registered to this node, and a restart takes a new one", l.forever, l.id)
		}
		return fmt.Errorf("ZooKeeper at %s: writing %s: %w", p.where(), l.forever, err)
	}
	temp := p.temporaryPath()
	if final {
		if err := l.conn.Delete(temp, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("ZooKeeper at %s: deleting %s: %w", p.where(), temp, err)
		}
		return nil
	}
	_, err := l.conn.Set(temp, data, -1)
	if errors.Is(err, zk.ErrNoNode) { // a new session, or resumed from the cache
		_, err = l.conn.Create(temp, data, zk.FlagEphemeral, acl)
	}
	if err != nil {
		return fmt.Errorf("ZooKeeper at %s: writing %s: %w", p.where(), temp, err)
	}
	return nil
}

// Release stops the reports, writes the final time, deletes the
// temporary node and closes the session. The worker ID stays bound to
// this host:port. It is idempotent.
func (l *lease) Release(ctx context.Context) error {
	l.once.Do(func() {
		close(l.stop)
		<-l.exited
		l.err = within(ctx, l.conn, func() error { return l.write(true) })
		l.conn.Close()
	})
	return l.err
}

// where names the servers for messages.
func (p *Provider) where() string { return strings.Join(p.servers, ",") }

// zkLogger sends the ZooKeeper client's own messages to slog at debug
// level: it reports every reconnection attempt.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zookeeper client: " + fmt.Sprintf(format, args...))
}
