package testsvc

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// ZooKeeperEnv names the environment variable that overrides the
// ZooKeeper address (host:port, or several separated by commas).
const ZooKeeperEnv = "IDFORGE_TEST_ZOOKEEPER"

// DefaultZooKeeper is the ZooKeeper address used when the environment
// sets none.
const DefaultZooKeeper = "127.0.0.1:2181"

const startZooKeeper = "/usr/share/zookeeper/bin/zkServer.sh start"

// zkConns caches one session per address for the whole test binary, and
// the error of an unreachable server so that later tests skip at once.
var zkConns struct {
	mu    sync.Mutex
	conns map[string]*zk.Conn
	errs  map[string]error
}

// ZooKeeper returns an idforge worker URL on the ZooKeeper server with a
// fresh Leaf name of its own, e.g. "zk://127.0.0.1:2181/idforge-t-1f2e3d4c5b6a7988",
// and deletes the tree /snowflake/{name} when tb ends.
func ZooKeeper(tb testing.TB) string {
	tb.Helper()
	addr, conn := zkAdmin(tb)
	name := "idforge-t-" + randomHex()
	tb.Cleanup(func() {
		if err := deleteTree(conn, "/snowflake/"+name); err != nil {
			tb.Errorf("testsvc: ZooKeeper: delete /snowflake/%s: %v", name, err)
		}
	})
	return "zk://" + addr + "/" + name
}

// ZooKeeperConn returns a session on the ZooKeeper server that
// ZooKeeper's URLs name, for nodes a test reads or writes by hand. It is
// shared: do not close it.
func ZooKeeperConn(tb testing.TB) *zk.Conn {
	tb.Helper()
	_, conn := zkAdmin(tb)
	return conn
}

func zkAdmin(tb testing.TB) (string, *zk.Conn) {
	tb.Helper()
	addr := os.Getenv(ZooKeeperEnv)
	if addr == "" {
		addr = DefaultZooKeeper
	}
	zkConns.mu.Lock()
	defer zkConns.mu.Unlock()
	if zkConns.conns == nil {
		zkConns.conns = map[string]*zk.Conn{}
		zkConns.errs = map[string]error{}
	}
	conn, err := zkConns.conns[addr], zkConns.errs[addr]
	if conn == nil && err == nil {
		conn, err = zkConnect(addr)
		zkConns.conns[addr], zkConns.errs[addr] = conn, err
	}
	if err != nil {
		serviceUnreachable(tb, "ZooKeeper", addr, err, startZooKeeper, ZooKeeperEnv)
	}
	return addr, conn
}

func zkConnect(addr string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(addr, ","), 10*time.Second,
		zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	timeout := time.After(3 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return conn, nil
			}
		case <-timeout:
			conn.Close()
			return nil, fmt.Errorf("no session within 3s")
		}
	}
}

// deleteTree deletes path and everything under it.
func deleteTree(conn *zk.Conn, path string) error {
	children, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteTree(conn, path+"/"+c); err != nil {
			return err
		}
	}
	if err := conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
