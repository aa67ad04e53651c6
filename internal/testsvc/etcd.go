package testsvc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdEnv names the environment variable that overrides the etcd address
// (host:port, or several separated by commas).
const EtcdEnv = "IDFORGE_TEST_ETCD"

// DefaultEtcd is the etcd address used when the environment sets none.
const DefaultEtcd = "127.0.0.1:2379"

const startEtcd = "mkdir -p /tmp/etcd-data && etcd --data-dir /tmp/etcd-data --listen-client-urls http://127.0.0.1:2379 " +
	"--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 &"

// etcdClients caches one client per address for the whole test binary,
// and the error of an unreachable server so that later tests skip at once.
var etcdClients struct {
	mu   sync.Mutex
	clis map[string]*clientv3.Client
	errs map[string]error
}

// Etcd returns an idforge worker URL on the etcd server with a fresh key
// prefix of its own, e.g. "etcd://127.0.0.1:2379/idforge-t-1f2e3d4c5b6a7988",
// and deletes every key under the prefix when tb ends.
func Etcd(tb testing.TB) string {
	tb.Helper()
	addr, cli := etcdAdmin(tb)
	prefix := "/idforge-t-" + randomHex()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if _, err := cli.Delete(ctx, prefix+"/", clientv3.WithPrefix()); err != nil {
			tb.Errorf("testsvc: etcd: delete %s/: %v", prefix, err)
		}
	})
	return "etcd://" + addr + prefix
}

// EtcdClient returns a client of the etcd server that Etcd's URLs name,
// for keys a test reads or writes by hand. It is shared: do not close it.
func EtcdClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	_, cli := etcdAdmin(tb)
	return cli
}

func etcdAdmin(tb testing.TB) (string, *clientv3.Client) {
	tb.Helper()
	addr := os.Getenv(EtcdEnv)
	if addr == "" {
		addr = DefaultEtcd
	}
	etcdClients.mu.Lock()
	defer etcdClients.mu.Unlock()
	if etcdClients.clis == nil {
		etcdClients.clis = map[string]*clientv3.Client{}
		etcdClients.errs = map[string]error{}
	}
	cli, err := etcdClients.clis[addr], etcdClients.errs[addr]
	if cli == nil && err == nil {
		cli, err = etcdConnect(addr)
		etcdClients.clis[addr], etcdClients.errs[addr] = cli, err
	}
	if err != nil {
		serviceUnreachable(tb, "etcd", addr, err, startEtcd, EtcdEnv)
	}
	return addr, cli
}

func etcdConnect(addr string) (*clientv3.Client, error) {
	var eps []string
	for h := range strings.SplitSeq(addr, ",") {
		eps = append(eps, "http://"+h)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, "/idforge-t-ping"); err != nil {
		cli.Close()
		return nil, err
	}
	return cli, nil
}

// serviceUnreachable ends a test whose service is missing: a skip that says how
// to start it, or a failure under CI.
func serviceUnreachable(tb testing.TB, name, addr string, err error, start, env string) {
	tb.Helper()
	msg := fmt.Sprintf("testsvc: %s at %s is unreachable (%v); start it with\n\t%s\nor point %s at another server",
		name, addr, err, start, env)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// randomHex returns 16 random hex digits.
func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
