package idforge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
	"github.com/idforge/idforge/store/sqlite"
)

// Embedding idforge: a segment key backed by a store (memstore here; use
// store/sqlite or a SQL server in production), issuing from memory.
func Example_segment() {
	ctx := context.Background()
	store := memstore.New()
	err := store.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	if err != nil {
		panic(err)
	}
	var gen idforge.BatchGenerator = segment.New(store, "order", segment.Settings{})
	id, _ := gen.Next(ctx)
	ids, _ := gen.NextN(ctx, 3)
	fmt.Println(id, ids)
	// Output: 1 [2 3 4]
}

// Decoding a snowflake ID with a layout, and forging one from its fields.
func Example_snowflake() {
	layout, err := snowflake.Preset("twitter")
	if err != nil {
		panic(err)
	}
	parts, err := layout.Explain(1541815603606036480)
	if err != nil {
		panic(err)
	}
	fmt.Println(parts.Time.Format("2006-01-02 15:04:05.000"), parts.Datacenter, parts.Worker, parts.Sequence)
	id, _ := layout.Make(parts)
	fmt.Println(id)
	fmt.Println("time bits run out:", layout.Expires().Format("2006-01-02"))
	// Output:
	// 2022-06-28 16:07:40.105 11 26 0
	// 1541815603606036480
	// time bits run out: 2080-07-10
}

// Errors are sentinel values tested with errors.Is.
func ExampleValidateKeyName() {
	err := idforge.ValidateKeyName("order 2024")
	fmt.Println(errors.Is(err, idforge.ErrInvalidKey))
	fmt.Println(err)
	// Output:
	// true
	// idforge: invalid key name: character 6 ' ' (U+0020) is not allowed; names use A-Z a-z 0-9 . _ : -
}

// A program that embeds idforge's parts: a segment key on a SQLite file,
// and a snowflake generator whose time fence (the last time it issued at,
// so that a restart with a clock set back cannot reuse time) is kept in a
// locked data directory.
func Example_library() {
	tmp, err := os.MkdirTemp("", "idforge-library")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()

	store, err := sqlite.Open(ctx, filepath.Join(tmp, "ids.db")) // or memstore.New() in tests
	if err != nil {
		panic(err)
	}
	defer store.Close()
	err = store.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	orders := segment.New(store, "order", segment.Settings{}) // double-buffered, adaptive
	defer orders.Close()
	id, err := orders.Next(ctx)
	fmt.Println(id, err)

	dir, err := datadir.Open(filepath.Join(tmp, "data")) // one process at a time
	if err != nil {
		panic(err)
	}
	defer dir.Close()
	gen, err := snowflake.New(snowflake.Settings{Worker: 7, Fence: dir.TimeFence()})
	if err != nil {
		panic(err)
	}
	defer gen.Close()
	sid, err := gen.Next(ctx)
	fmt.Println(sid > 0, err)
	// Output:
	// 1 <nil>
	// true <nil>
}
