package redisconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
)

// Writer runs the scripts whose replies hand out values (an INCR, a
// period's count, a worker-ID lease) so that, with Replication, the
// write reaches replicas before its values are handed out. It is safe
// for concurrent use.
type Writer struct {
	Client goredis.UniversalClient
	Replication
}

// NotReplicatedError reports a write that fewer replicas than asked
// acknowledged in time. The write stands on the primary, but its values
// must not be handed out: a fail-over could lose it and hand them out
// again. It wraps idforge.ErrUnavailable (HTTP 503, code unavailable).
type NotReplicatedError struct {
	Acked, Want int
	Replication
}

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("redis: the write reached %d of the %d replicas required within %s (WAIT); its values are not handed out",
		e.Acked, e.Want, e.Timeout)
}

// Unwrap returns idforge.ErrUnavailable.
func (e *NotReplicatedError) Unwrap() error { return idforge.ErrUnavailable }

// Eval runs sc on keys with args, as sc.Run does (EVALSHA, then EVAL when
// the server lacks the script). With MinReplicas > 0 it then sends WAIT
// MinReplicas Timeout in the same round trip, on the same connection (on
// a cluster, to the master of keys[0]'s slot), and returns a
// *NotReplicatedError when fewer replicas acknowledged. The script's
// own errors are returned as they are; the command holds the reply.
func (w Writer) Eval(ctx context.Context, sc *goredis.Script, keys []string, args ...any) (*goredis.Cmd, error) {
	if w.MinReplicas <= 0 {
		cmd := sc.Run(ctx, w.Client, keys, args...)
		return cmd, cmd.Err()
	}
	var node goredis.Cmdable = w.Client
	cluster, isCluster := w.Client.(*goredis.ClusterClient)
	if isCluster {
		c, err := cluster.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		node = c
	}
	cmd, acked, err := w.evalWait(ctx, node, false, sc, keys, args)
	if to, ask := strings.CutPrefix(errText(err), "ASK "); ask && isCluster {
		// The slot is being migrated and the key has moved already: ask
		// its new master, as go-redis does ("ASK slot host:port").
		if n := masterAt(ctx, cluster, to[strings.IndexByte(to, ' ')+1:]); n != nil {
			cmd, acked, err = w.evalWait(ctx, n, true, sc, keys, args)
		}
	}
	if err != nil {
		if isCluster && (isRedirect(err) || !isReply(err)) {
			// The slot moved, or its master does not answer (perhaps
			// failed over): learn the cluster's layout again.
			cluster.ReloadState(ctx)
		}
		return cmd, err
	}
	if acked < int64(w.MinReplicas) {
		return cmd, &NotReplicatedError{Acked: int(acked), Want: w.MinReplicas, Replication: w.Replication}
	}
	return cmd, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// masterAt returns the client of the cluster's master at addr, nil when
// the cluster knows none.
func masterAt(ctx context.Context, cluster *goredis.ClusterClient, addr string) *goredis.Client {
	var mu sync.Mutex
	var found *goredis.Client
	_ = cluster.ForEachMaster(ctx, func(_ context.Context, c *goredis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	return found
}

// evalWait sends the script (EVALSHA, then EVAL when the server lacks
// it) and WAIT in one pipeline, after ASKING when asking.
func (w Writer) evalWait(ctx context.Context, node goredis.Cmdable, asking bool, sc *goredis.Script, keys []string, args []any) (*goredis.Cmd, int64, error) {
	cmd, n, err := w.evalWaitWith(ctx, node, asking, sc.EvalSha, keys, args)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd, n, err = w.evalWaitWith(ctx, node, asking, sc.Eval, keys, args)
	}
	return cmd, n, err
}

func (w Writer) evalWaitWith(ctx context.Context, node goredis.Cmdable, asking bool,
	eval func(context.Context, goredis.Scripter, []string, ...any) *goredis.Cmd, keys []string, args []any,
) (*goredis.Cmd, int64, error) {
	var cmd *goredis.Cmd
	var wait *goredis.IntCmd
	_, _ = node.Pipelined(ctx, func(p goredis.Pipeliner) error {
		if asking {
			_ = p.Process(ctx, goredis.NewStatusCmd(ctx, "asking"))
		}
		cmd = eval(ctx, p, keys, args...)
		wait = goredis.NewIntCmd(ctx, "wait", w.MinReplicas, w.Timeout.Milliseconds())
		_ = p.Process(ctx, wait)
		return nil
	})
	if err := cmd.Err(); err != nil {
		return cmd, 0, err
	}
	n, err := wait.Result()
	if err != nil {
		return cmd, 0, fmt.Errorf("%w: WAIT after the write failed, so whether replicas have it is unknown: %w", idforge.ErrUnavailable, err)
	}
	return cmd, n, nil
}

// isReply reports whether err is an error reply from Redis, as opposed
// to a network failure.
func isReply(err error) bool {
	var re goredis.Error
	return errors.As(err, &re) && !errors.Is(err, goredis.ErrClosed)
}

// isRedirect reports a cluster error that means the slot is elsewhere or
// the cluster is changing.
func isRedirect(err error) bool {
	var re goredis.Error
	if !errors.As(err, &re) {
		return false
	}
	s := err.Error()
	return strings.HasPrefix(s, "MOVED") || strings.HasPrefix(s, "ASK") ||
		strings.HasPrefix(s, "CLUSTERDOWN") || strings.HasPrefix(s, "TRYAGAIN")
}
