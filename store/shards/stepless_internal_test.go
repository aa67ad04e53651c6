package shards

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/sqlite"
)

// steplessBackend is a database whose claims of a given size report no
// stored step, as MySQL's do when the read after the claim fails.
type steplessBackend struct{ store.Backend }

func (b steplessBackend) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	seg, err := b.Backend.ClaimSegment(ctx, key, step)
	if step > 0 {
		seg.Step = 0
	}
	return seg, err
}

// A database behind the blocks handed out skips ahead with a claim of a
// given size; when that claim reports no step, the block still has the
// key's step and the database's residue (it was an empty block, or a
// division by zero).
func TestSkipAheadWithoutStep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw := "shards+sqlite://" + filepath.Join(dir, "a.db") + "?also=" + filepath.Join(dir, "b.db")
	m, err := store.Open(ctx, raw, store.Options{ForMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.(idforge.Migrator).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()
	opened, err := store.Open(ctx, raw, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	s := opened.(*Store)
	if err := s.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	b, err := s.db(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.members[1].st = steplessBackend{b}
	kt := &turn{}
	for range 3 { // database 0 runs ahead: [1, 11), [21, 31), [41, 51)
		if _, err := s.claim(ctx, 0, "k", kt); err != nil {
			t.Fatal(err)
		}
	}
	seg, err := s.claim(ctx, 1, "k", kt)
	if err != nil || seg.Len() != 10 || seg.Step != 10 || seg.Start < 51 || (seg.Start-1)/10%2 != 1 {
		t.Fatalf("database 1 after skipping ahead: %+v, %v; want a block of 10 from 51 on with residue 1", seg, err)
	}
}
