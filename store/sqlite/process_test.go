package sqlite_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/sqltest"
	"github.com/idforge/idforge/store/sqlite"
)

// childEnv, when set, names the database file TestClaimerProcess claims
// from; it is set only for the processes TestProcessesShareFile starts.
const childEnv = "IDFORGE_SQLITE_TEST_CLAIMER_DB"

const (
	childWorkers = 4
	childClaims  = 15
	childStep    = 100
)

// TestClaimerProcess is the body of a child process of
// TestProcessesShareFile: it claims segments from several goroutines and
// prints one "start end" line per segment. It does nothing in a normal run.
func TestClaimerProcess(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("runs only as a child of TestProcessesShareFile")
	}
	st, err := sqlite.Open(context.Background(), path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		mu  sync.Mutex
		out bytes.Buffer
	)
	errs := make(chan error, childWorkers)
	var wg sync.WaitGroup
	for range childWorkers {
		wg.Go(func() {
			for range childClaims {
				seg, err := st.ClaimSegment(context.Background(), "multi", 0)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				fmt.Fprintf(&out, "%d %d\n", seg.Start, seg.End)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	os.Stdout.Write(out.Bytes())
}

// TestProcessesShareFile runs several operating-system processes claiming
// from one file at once, as idforge nodes sharing a data directory would.
func TestProcessesShareFile(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		return
	}
	const procs = 3
	path := filepath.Join(t.TempDir(), "multi.db")
	st := openAt(t, path)
	if err := st.CreateKey(context.Background(), idforge.Key{Name: "multi", Strategy: idforge.StrategySegment, MaxID: 1, Step: childStep}); err != nil {
		t.Fatal(err)
	}

	type result struct {
		out []byte
		err error
	}
	results := make(chan result, procs)
	for range procs {
		go func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestClaimerProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("child: %v\n%s%s", err, out, stderr.Bytes())
			}
			results <- result{out, err}
		}()
	}
	// The parent claims too, while the children run.
	var all []idforge.Segment
	for range childClaims {
		all = append(all, sqltest.MustClaim(t, st, "multi", 0))
	}
	for range procs {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		sc := bufio.NewScanner(bytes.NewReader(r.out))
		for sc.Scan() {
			var seg idforge.Segment
			if _, err := fmt.Sscan(sc.Text(), &seg.Start, &seg.End); err != nil {
				continue // "PASS" and other test output
			}
			all = append(all, seg)
		}
	}
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	next := int64(1)
	for _, s := range all {
		if s.Start != next || s.Len() != childStep {
			t.Fatalf("segment [%d, %d) after end %d: overlap, gap or wrong length", s.Start, s.End, next)
		}
		next = s.End
	}
	if want := (procs*childWorkers + 1) * childClaims; len(all) != want {
		t.Fatalf("%d segments, want %d", len(all), want)
	}
	t.Logf("%d processes + parent claimed %d segments up to %s", procs, len(all), strconv.FormatInt(next, 10))
}
