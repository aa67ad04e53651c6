package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/verify"
)

// verifyCluster starts nodes on one fresh MariaDB database, with
// the worker IDs given, each also serving gRPC, and defines a segment
// key, a snowflake key and a serial on them.
func verifyCluster(t *testing.T, workers ...int) (nodes []*e2e.Node, grpcAddrs []string) {
	t.Helper()
	storeURL := testsvc.MySQL(t)
	migrate(t, storeURL)
	for _, w := range workers {
		addr := e2e.FreePort(t)
		nodes = append(nodes, e2e.StartNode(t, "--store", storeURL, "--worker", strconv.Itoa(w), "--grpc", addr))
		grpcAddrs = append(grpcAddrs, addr)
	}
	createKey(t, nodes[0], `{"key":"order","step":50}`)
	createKey(t, nodes[0], `{"key":"msg","strategy":"snowflake"}`)
	body := `{"name":"inv","template":"INV-@{date:yyyyMMdd}-@{seq:order,width=9}"}`
	if status, resp, err := e2e.Do(context.Background(), "POST", nodes[0].URL("/v1/serials"), body); err != nil || status != 201 {
		t.Fatalf("POST /v1/serials: %d %s %v", status, resp, err)
	}
	return nodes, grpcAddrs
}

// runVerify runs `idforge verify --json args…` and returns its report and
// exit status. start, when set, runs once the command has started.
func runVerify(t *testing.T, start func(), args ...string) (verify.Report, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(e2e.Binary(t), append([]string{"verify", "--json"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if start != nil {
		start()
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var r verify.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("verify printed no JSON report (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	t.Logf("verify %v: exit %d, %d values, %d errors, %d violations; stderr: %s", args, code, r.Values, r.Errors, r.Violations, stderr.String())
	return r, code
}

func targetReport(t *testing.T, r verify.Report, name string) verify.TargetReport {
	t.Helper()
	for _, tr := range r.Targets {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no report of %s in %+v", name, r)
	return verify.TargetReport{}
}

// idforge verify against three healthy nodes on MariaDB, over HTTP and
// over gRPC: every check passes, every node answered, and each node's
// snowflake IDs carry its own worker ID.
func TestVerifyHealthyCluster(t *testing.T) {
	endToEnd(t, parallel)
	testsvc.Slow(t)
	nodes, grpcAddrs := verifyCluster(t, 1, 2, 3)
	var httpAddrs []string
	for _, n := range nodes {
		httpAddrs = append(httpAddrs, n.URL(""))
	}
	for name, args := range map[string][]string{
		"http": append([]string{"--serial", "inv"}, httpAddrs...),
		"grpc": append([]string{"--grpc", "--serial", "inv", "--template", "inv=INV-@{date:yyyyMMdd}-@{seq:order,width=9}"}, grpcAddrs...),
	} {
		t.Run(name, func(t *testing.T) {
			r, code := runVerify(t, nil, append([]string{"--segment", "order", "--snowflake", "msg", "--duration", "2s", "--clients", "3"}, args...)...)
			if code != 0 || !r.Passed || r.Violations != 0 {
				t.Fatalf("exit %d, report %+v", code, r)
			}
			for _, name := range []string{"order", "msg", "inv"} {
				if tr := targetReport(t, r, name); tr.Values < 100 {
					t.Errorf("%s: only %d values verified", name, tr.Values)
				}
			}
			if !targetReport(t, r, "inv").TemplateChecked {
				t.Error("serials were not checked against their template")
			}
			workers := map[string]int64{}
			for _, w := range r.Workers {
				workers[w.Node] = w.Worker
			}
			if len(workers) != 3 {
				t.Errorf("worker IDs by node = %v, want one for each of the 3 nodes", r.Workers)
			}
		})
	}
}

// Two planted faults that idforge verify must catch: a third node
// started on a store of its own, whose key row stands where the shared
// one started (a node pointed at a restored backup, or at the wrong
// database), and with the first node's worker ID. It exits 1, naming
// duplicate segment IDs, duplicate snowflake IDs and the shared worker ID.
// (A row lowered by hand under running nodes is caught by the nodes
// themselves: a node refuses a segment below what it claimed.)
func TestVerifyCatchesPlantedFaults(t *testing.T) {
	endToEnd(t, parallel)
	testsvc.Slow(t)
	nodes, _ := verifyCluster(t, 1, 2)
	other := testsvc.MySQL(t)
	migrate(t, other)
	stray := e2e.StartNode(t, "--store", other, "--worker", "1")
	createKey(t, stray, `{"key":"order","step":50}`)
	createKey(t, stray, `{"key":"msg","strategy":"snowflake"}`)
	args := []string{"--segment", "order", "--snowflake", "msg", "--duration", "3s"}
	for _, n := range append(nodes, stray) {
		args = append(args, n.Addr)
	}
	r, code := runVerify(t, nil, args...)
	if code != 1 || r.Passed {
		t.Fatalf("exit %d, passed %v: the faults went unnoticed", code, r.Passed)
	}
	order, msg := targetReport(t, r, "order"), targetReport(t, r, "msg")
	if order.Violations[verify.Unique] == 0 {
		t.Errorf("the stray store's duplicate segment IDs were not reported: %+v", order)
	}
	if msg.Violations[verify.Worker] == 0 {
		t.Errorf("the shared worker ID was not reported: %+v", msg)
	}
	for _, tr := range []verify.TargetReport{order, msg} {
		if len(tr.Examples) == 0 {
			t.Errorf("%s: no examples of its violations", tr.Name)
		}
	}
}

// Bad invocations exit 2 before asking anything.
func TestVerifyUsage(t *testing.T) {
	endToEnd(t, parallel)
	for _, args := range [][]string{
		{"verify"},
		{"verify", "127.0.0.1:1"},
		{"verify", "--segment", "order"},
		{"verify", "--segment", "order", "--batch", "0", "127.0.0.1:1"},
		{"verify", "--grpc", "--serial", "inv", "127.0.0.1:1"},
		{"verify", "--segment", "order", "--duration", "0", "127.0.0.1:1"},
	} {
		err := exec.Command(e2e.Binary(t), args...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit status 2", args, err)
		}
	}
}

// idforge doctor against three running nodes on MariaDB: the third node's
// clock is 3 s ahead and it shares the second's worker ID, and the key's
// segments are capped so small that a store outage of a second would
// stop it. Doctor fails on each, with the node's measured rate, and
// finds the others' clocks fine.
func TestDoctorAgainstRunningNodes(t *testing.T) {
	endToEnd(t, parallel)
	storeURL := testsvc.MySQL(t)
	migrate(t, storeURL)
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	os.WriteFile(cfg, []byte("[segment]\nmax_step = 20\n"), 0o600)
	var nodes []*e2e.Node
	for i, w := range []string{"1", "2", "2"} {
		n := e2e.NewNode(t, "--store", storeURL, "--worker", w, "--config", cfg)
		if i == 2 {
			n.SetClock(3 * time.Second)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	createKey(t, nodes[0], `{"key":"order","step":20}`)
	ctx, stop := context.WithTimeout(context.Background(), time.Second)
	e2e.Drive(ctx, e2e.NewLedger(), 2, func(ctx context.Context, _ int) ([]int64, error) {
		return e2e.FetchIDs(ctx, nodes[0].URL("/v1/ids/order?count=5"))
	})
	stop()

	args := []string{"doctor", "--json", "--store", storeURL, "--data", t.TempDir()}
	for _, n := range nodes {
		args = append(args, "--node", n.URL(""))
	}
	out, err := exec.Command(e2e.Binary(t), args...).Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("doctor: %v, want exit status 1\n%s", err, out)
	}
	var r struct {
		Findings []struct{ Status, Check, Message string }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	has := func(status, check string, fragments ...string) {
		t.Helper()
		for _, f := range r.Findings {
			if f.Status != status || f.Check != check {
				continue
			}
			ok := true
			for _, frag := range fragments {
				ok = ok && strings.Contains(f.Message, frag)
			}
			if ok {
				return
			}
		}
		t.Errorf("no %s %s finding with %q in:\n%s", status, check, fragments, out)
	}
	has("fail", "clock", nodes[2].Addr, "ahead of")
	has("ok", "clock", nodes[0].Addr)
	has("ok", "clock", nodes[1].Addr)
	has("fail", "workers", nodes[1].Addr, nodes[2].Addr, "worker 2")
	has("fail", "step order", "IDs/s", nodes[0].Addr)
	has("ok", "schema")
}
