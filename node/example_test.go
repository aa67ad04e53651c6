package node_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/node"
	_ "github.com/idforge/idforge/sequence/sqlrow" // SQL sources and counters
	_ "github.com/idforge/idforge/store/sqlite"    // the default store: SQLite in the data directory
)

// A program that embeds idforge opens a node on its own data directory
// (SQLite there by default, a worker ID kept in a file there) and issues
// from its issuer: no server, no other process.
func Example() {
	dir, err := os.MkdirTemp("", "idforge-node-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	n, err := node.Open(ctx, node.Settings{
		DataDir: dir,
		Keys: []node.Key{
			{Key: idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}},
			{Key: idforge.Key{Name: "invoice", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}, Format: "base62:min=6"},
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Close()

	orders, err := n.Issuer().TakeStrings(ctx, "order", 3)
	fmt.Println(orders, err)
	invoices, err := n.Issuer().TakeStrings(ctx, "invoice", 2)
	fmt.Println(invoices, err)
	// Output:
	// [1 2 3] <nil>
	// [000001 000002] <nil>
}

// A source or counter defined in the store is served by every node that
// shares the store, without a restart: here the issuer reads the counter
// "daily" from the store the first time a serial template names it.
func Example_definitions() {
	dir, err := os.MkdirTemp("", "idforge-definitions-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	n, err := node.Open(ctx, node.Settings{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer n.Close()
	iss := n.Issuer()
	spec := `{"url":"sqlite:` + filepath.Join(dir, "counters.db") + `?period=day"}`
	if err := iss.Define(ctx, idforge.Definition{Kind: node.KindCounter, Name: "daily", Spec: spec}); err != nil {
		panic(err)
	}
	if err := iss.CreateSerial(ctx, idforge.Serial{Name: "waybill", Template: "W@{date:yyyyMMdd}-@{seq:daily,width=5}"}); err != nil {
		panic(err)
	}
	v, err := iss.NextSerial(ctx, "waybill", 2, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(v[0][len(v[0])-6:], v[1][len(v[1])-6:])
	defs, _ := iss.ListDefined(ctx, node.KindCounter)
	fmt.Println(defs[0].Name, defs[0].Origin, defs[0].Retired)
	// Output:
	// -00001 -00002
	// daily api false
}
