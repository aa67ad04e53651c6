package testsvc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisSentinelEnv names the redis-sentinel binary StartRedisSentinels
// runs; "redis-sentinel" on the PATH when unset.
const RedisSentinelEnv = "IDFORGE_TEST_REDIS_SENTINEL"

// RedisCLIEnv names the redis-cli binary StartRedisCluster runs;
// "redis-cli" on the PATH when unset.
const RedisCLIEnv = "IDFORGE_TEST_REDIS_CLI"

// Port returns the server's port.
func (s *RedisServer) Port() int { return s.port }

// Do sends one command to the server and returns its reply. It fails the
// test on an error.
func (s *RedisServer) Do(args ...any) any {
	s.tb.Helper()
	v, err := s.Try(args...)
	if err != nil {
		s.tb.Fatalf("testsvc: redis %s %v: %v", s.Addr(), args, err)
	}
	return v
}

// Try sends one command to the server, within five seconds, and returns
// its reply or error.
func (s *RedisServer) Try(args ...any) (any, error) {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Result()
}

// Info returns the value of field in INFO's section, "" when absent or
// when the server does not answer.
func (s *RedisServer) Info(section, field string) string {
	v, err := s.Try("INFO", section)
	if err != nil {
		return ""
	}
	text, _ := v.(string)
	for line := range strings.SplitSeq(text, "\r\n") {
		if val, ok := strings.CutPrefix(line, field+":"); ok {
			return val
		}
	}
	return ""
}

// ReplicaOf makes the server a replica of addr (host:port, perhaps a
// proxy's) and waits until it has synchronised.
func (s *RedisServer) ReplicaOf(addr string) {
	s.tb.Helper()
	host, port, _ := strings.Cut(addr, ":")
	s.Do("REPLICAOF", host, port)
	s.waitFor("replication with "+addr, func() bool {
		return s.Info("replication", "master_link_status") == "up" && s.Info("replication", "master_sync_in_progress") == "0"
	})
}

// waitFor polls cond for up to 30 seconds, failing the test after.
func (s *RedisServer) waitFor(what string, cond func() bool) {
	s.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			s.tb.Fatalf("testsvc: redis %s: no %s within 30s", s.Addr(), what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lookRedisTool finds one of the Redis binaries, or ends the test saying
// how to install it.
func lookRedisTool(tb testing.TB, name, env, pkg string) string {
	tb.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		bin = name
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		serviceUnreachable(tb, name, bin, err, "apt-get install "+pkg, env)
	}
	return path
}

// RedisSentinels are redis-sentinel processes of a test's own, on free
// loopback ports, watching one primary.
type RedisSentinels struct {
	Master string // the master name
	procs  []*RedisServer
}

// Sentinel timings: a primary that does not answer for SentinelDownAfter
// is failed over; SentinelFailoverTimeout bounds a fail-over attempt.
const (
	SentinelDownAfter       = time.Second
	SentinelFailoverTimeout = 5 * time.Second
)

// StartRedisSentinels starts n sentinels (quorum n/2+1) watching the
// primary at addr under the name master, and waits until each knows the
// primary's replicas, if any. They are killed when tb ends. When
// redis-sentinel is missing the test is skipped with a message saying
// how to install it, or fails under CI.
func StartRedisSentinels(tb testing.TB, master, primary string, n int) *RedisSentinels {
	tb.Helper()
	bin := lookRedisTool(tb, "redis-sentinel", RedisSentinelEnv, "redis-sentinel")
	host, port, _ := strings.Cut(primary, ":")
	ss := &RedisSentinels{Master: master}
	for range n {
		s := &RedisServer{tb: tb, bin: bin, dir: tb.TempDir()}
		conf := filepath.Join(s.dir, "sentinel.conf")
		s.args = func(p int) []string {
			text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile \"\"\n"+
				"sentinel monitor %s %s %s %d\n"+
				"sentinel down-after-milliseconds %s %d\n"+
				"sentinel failover-timeout %s %d\n"+
				"sentinel parallel-syncs %s 1\n",
				p, s.dir, master, host, port, n/2+1,
				master, SentinelDownAfter.Milliseconds(), master, SentinelFailoverTimeout.Milliseconds(), master)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				tb.Fatalf("testsvc: redis-sentinel: %v", err)
			}
			return []string{conf}
		}
		s.startFree("redis-sentinel")
		ss.procs = append(ss.procs, s)
	}
	return ss
}

// Addrs returns the sentinels' host:port addresses.
func (ss *RedisSentinels) Addrs() []string {
	out := make([]string, len(ss.procs))
	for i, s := range ss.procs {
		out[i] = s.Addr()
	}
	return out
}

// URL returns a Sentinel URL of scheme ("redis+sentinel") naming every
// sentinel and the master, with query appended ("" for none).
func (ss *RedisSentinels) URL(scheme, query string) string {
	u := scheme + "://" + strings.Join(ss.Addrs(), ",") + "/" + ss.Master
	if query != "" {
		u += "?" + query
	}
	return u
}

// MasterAddr returns the primary's address as the first sentinel that
// answers sees it, "" when none does.
func (ss *RedisSentinels) MasterAddr() string {
	for _, s := range ss.procs {
		v, err := s.Try("SENTINEL", "get-master-addr-by-name", ss.Master)
		if a, ok := v.([]any); err == nil && ok && len(a) == 2 {
			return fmt.Sprintf("%v:%v", a[0], a[1])
		}
	}
	return ""
}

// WaitReplicas waits until every sentinel knows n replicas of the master
// that are up.
func (ss *RedisSentinels) WaitReplicas(tb testing.TB, n int) {
	tb.Helper()
	for _, s := range ss.procs {
		s.waitFor(fmt.Sprintf("%d replicas known to the sentinel", n), func() bool {
			v, err := s.Try("SENTINEL", "replicas", ss.Master)
			list, ok := v.([]any)
			if err != nil || !ok {
				return false
			}
			up := 0
			for _, r := range list {
				if !strings.Contains(fmt.Sprint(r), "s_down") {
					up++
				}
			}
			return up >= n
		})
	}
}

// RedisCluster is a Redis Cluster of a test's own: masters with one
// replica each, on free loopback ports.
type RedisCluster struct {
	tb    testing.TB
	Nodes []*RedisServer
}

// ClusterNodeTimeout is the cluster-node-timeout of StartRedisCluster's
// nodes: a master silent for longer is failed over.
const ClusterNodeTimeout = time.Second

// StartRedisCluster starts 2×masters redis-server nodes in cluster mode
// and joins them with redis-cli --cluster create … --cluster-replicas 1,
// then waits until every node reports cluster_state:ok. They are killed
// when tb ends.
func StartRedisCluster(tb testing.TB, masters int) *RedisCluster {
	tb.Helper()
	cli := lookRedisTool(tb, "redis-cli", RedisCLIEnv, "redis-tools")
	c := &RedisCluster{tb: tb}
	var addrs []string
	for range 2 * masters {
		bus, err := freePort()
		if err != nil {
			tb.Fatalf("testsvc: redis cluster: %v", err)
		}
		n := StartRedisServer(tb, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
			"--cluster-port", strconv.Itoa(bus), "--cluster-replica-validity-factor", "0")
		c.Nodes = append(c.Nodes, n)
		addrs = append(addrs, n.Addr())
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		tb.Fatalf("testsvc: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, n := range c.Nodes {
		n.waitFor("cluster_state:ok", func() bool { return clusterOK(n) })
		n.waitFor("replication", func() bool {
			role := n.Info("replication", "role")
			return role == "master" || role == "slave" && n.Info("replication", "master_link_status") == "up" &&
				n.Info("replication", "master_sync_in_progress") == "0"
		})
	}
	for _, n := range c.Nodes {
		n.waitFor("every node online", func() bool {
			v, err := n.Try("CLUSTER", "SHARDS")
			return err == nil && !strings.Contains(fmt.Sprint(v), "loading") && !strings.Contains(fmt.Sprint(v), "offline")
		})
	}
	return c
}

// clusterOK reports whether CLUSTER INFO says the cluster is ok.
func clusterOK(n *RedisServer) bool {
	v, err := n.Try("CLUSTER", "INFO")
	s, _ := v.(string)
	return err == nil && strings.Contains(s, "cluster_state:ok")
}

// URL returns a cluster URL of scheme ("redis+cluster") naming every node,
// with query appended ("" for none).
func (c *RedisCluster) URL(scheme, query string) string {
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr())
	}
	u := scheme + "://" + strings.Join(addrs, ",")
	if query != "" {
		u += "?" + query
	}
	return u
}

// MasterOf returns the node that is master of key's slot now, as the
// first live node sees it, and the node that replicates it (nil when
// none).
func (c *RedisCluster) MasterOf(key string) (master, replica *RedisServer) {
	c.tb.Helper()
	for _, n := range c.Nodes {
		v, err := n.Try("CLUSTER", "KEYSLOT", key)
		if err != nil {
			continue
		}
		slot := v.(int64)
		v, err = n.Try("CLUSTER", "SHARDS")
		if err != nil {
			continue
		}
		for _, sh := range v.([]any) {
			m := kv(sh)
			slots, _ := m["slots"].([]any)
			in := false
			for i := 0; i+1 < len(slots); i += 2 {
				if lo, hi := slots[i].(int64), slots[i+1].(int64); lo <= slot && slot <= hi {
					in = true
				}
			}
			if !in {
				continue
			}
			nodes, _ := m["nodes"].([]any)
			for _, nd := range nodes {
				f := kv(nd)
				port, _ := f["port"].(int64)
				node := c.node(int(port))
				if node == nil || f["health"] != "online" {
					continue
				}
				if f["role"] == "master" {
					master = node
				} else {
					replica = node
				}
			}
			return master, replica
		}
	}
	c.tb.Fatalf("testsvc: redis cluster: no node knows the master of %q", key)
	return nil, nil
}

func (c *RedisCluster) node(port int) *RedisServer {
	for _, n := range c.Nodes {
		if n.port == port {
			return n
		}
	}
	return nil
}

// kv reads a RESP2 flat list of name, value pairs.
func kv(v any) map[string]any {
	m := map[string]any{}
	if l, ok := v.([]any); ok {
		for i := 0; i+1 < len(l); i += 2 {
			if k, ok := l[i].(string); ok {
				m[k] = l[i+1]
			}
		}
	}
	if mm, ok := v.(map[any]any); ok {
		for k, val := range mm {
			m[fmt.Sprint(k)] = val
		}
	}
	return m
}

// StartRedisSentinelSet starts a primary, replicas replicating from it
// directly, and three sentinels watching it as master "idforge", and
// waits until the sentinels know every replica. Everything is killed when
// tb ends.
func StartRedisSentinelSet(tb testing.TB, replicas int) (*RedisSentinels, *RedisServer) {
	tb.Helper()
	primary := StartRedisServer(tb)
	for range replicas {
		StartRedisServer(tb).ReplicaOf(primary.Addr())
	}
	ss := StartRedisSentinels(tb, "idforge", primary.Addr(), 3)
	ss.WaitReplicas(tb, replicas)
	return ss, primary
}

// Stop freezes the server (SIGSTOP): it neither reads nor answers, as a
// stalled machine; its peers still see open connections. Continue
// resumes it.
func (s *RedisServer) Stop() { s.signal(syscall.SIGSTOP) }

// Continue resumes a server frozen by Stop (SIGCONT).
func (s *RedisServer) Continue() { s.signal(syscall.SIGCONT) }

func (s *RedisServer) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}

// OtherMaster returns a master of the cluster other than m.
func (c *RedisCluster) OtherMaster(m *RedisServer) *RedisServer {
	c.tb.Helper()
	for _, n := range c.Nodes {
		if n != m && n.Info("replication", "role") == "master" {
			return n
		}
	}
	c.tb.Fatal("testsvc: redis cluster: no other master")
	return nil
}

// MigrateSlot moves key's slot from its master to the master to, as
// redis-cli --cluster reshard does: CLUSTER SETSLOT … IMPORTING on to,
// MIGRATING on the old master, MIGRATE of the slot's keys one at a time
// (waiting pause after each, so that clients meet the slot half moved and
// are sent ASK redirects), then SETSLOT … NODE on every master.
func (c *RedisCluster) MigrateSlot(key string, to *RedisServer, pause time.Duration) {
	c.tb.Helper()
	from, _ := c.MasterOf(key)
	if from == to {
		c.tb.Fatalf("testsvc: redis cluster: %q's slot is on %s already", key, to.Addr())
	}
	slot := from.Do("CLUSTER", "KEYSLOT", key).(int64)
	fromID, toID := from.Do("CLUSTER", "MYID").(string), to.Do("CLUSTER", "MYID").(string)
	to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	for {
		keys := from.Do("CLUSTER", "GETKEYSINSLOT", slot, 1).([]any)
		if len(keys) == 0 {
			break
		}
		from.Do("MIGRATE", "127.0.0.1", to.Port(), keys[0], 0, 5000)
		time.Sleep(pause)
	}
	to.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	from.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	for _, n := range c.Nodes {
		if n != from && n != to && n.Info("replication", "role") == "master" {
			n.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
		}
	}
}
