package node_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/node"
	_ "github.com/idforge/idforge/store/sqlite" // the default store: SQLite in the data directory
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
