package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/postgres"
)

// An embedding program opens the store directly. The database must have
// been migrated (`idforge migrate`, or Store.Migrate) or hold Leaf's
// leaf_alloc table. (Not run: it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	cfg, err := postgres.ParseURL("postgres://idforge:secret@db.internal:5432/idforge?sslmode=verify-full&max_open_conns=20&timeout=2s")
	if err != nil {
		log.Fatal(err)
	}
	st, err := postgres.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	err = st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 1, Step: 2000})
	if err != nil {
		log.Fatal(err)
	}
	seg, err := st.ClaimSegment(ctx, "orders", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("[%d, %d)\n", seg.Start, seg.End) // [1, 2001)
}
