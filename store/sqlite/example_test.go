package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "idforge-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "idforge.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	// A segment key as Leaf creates them: the first ID is 1, and every
	// claim takes 2000 IDs.
	err = st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 1, Step: 2000})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		seg, err := st.ClaimSegment(ctx, "orders", 0)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("[%d, %d)\n", seg.Start, seg.End)
	}
	k, err := st.Key(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("next segment starts at", k.MaxID)
	// Output:
	// [1, 2001)
	// [2001, 4001)
	// next segment starts at 4001
}
