package quota_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/store"

	_ "github.com/idforge/idforge/sequence/sqlrow"
	_ "github.com/idforge/idforge/store/sqlite"
)

// Two nodes on one SQLite store: a quota defined through one node's
// Manager reaches the other at its Refresh, and counted in a SQLite
// counter store both share, concurrent callers on both never take more
// than the limit between them.
func TestTwoNodesOnSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *quota.Manager {
		st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "idforge.db"), store.Options{DataDir: dir, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		lim := quota.NewLimiter(nil)
		t.Cleanup(func() { lim.Close() })
		m, err := quota.NewManager(ctx, lim, st, nil, nil, quiet)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open(), open()
	const limit = 40
	err := a.Define(ctx, quota.Spec{Name: "orders", Keys: []string{"order"}, Limit: limit, Per: "day",
		Counter: "sqlite://" + filepath.Join(dir, "quotas.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.Limiter().Quotas(); len(got) != 1 || got[0].Name != "orders" {
		t.Fatalf("node b applies %+v", got)
	}
	var granted atomic.Int64
	var wg sync.WaitGroup
	for _, m := range []*quota.Manager{a, b} {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					err := m.Limiter().Before(ctx, plugin.Call{Key: "order", Strategy: idforge.StrategySegment, Count: 1})
					if err != nil {
						if !strings.Contains(err.Error(), "used up") {
							t.Error(err)
						}
						return
					}
					granted.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if g := granted.Load(); g != limit {
		t.Errorf("granted %d IDs, want exactly %d (leases of 1 below 64)", g, limit)
	}
}
