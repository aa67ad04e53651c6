package verify_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/memstore"
	"github.com/idforge/idforge/verify"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// node returns an issuer over st, as a node of a cluster sharing st. A
// real check runs against servers: client.NewHTTP([]string{addr},
// client.WithRetries(0)) per node.
func node(st idforge.Store) client.Client {
	return client.NewEmbedded(issuer.New(st, nil, issuer.Settings{Logger: quiet}))
}

// Two nodes sharing one store pass; a third with a store of its own (a
// node pointed at the wrong database) answers IDs the others answered.
func ExampleRun() {
	shared, shared2, wrong := memstore.New(), memstore.New(), memstore.New()
	for _, st := range []idforge.Store{shared, shared2, wrong} {
		st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	}
	targets := []verify.Target{{Name: "order", Kind: verify.Segment}}

	r, err := verify.Run(context.Background(), verify.Config{
		Nodes:   []verify.Node{{Name: "a", Client: node(shared)}, {Name: "b", Client: node(shared)}},
		Targets: targets, Count: 5000,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shared store passed:", r.Passed)

	r, _ = verify.Run(context.Background(), verify.Config{
		Nodes: []verify.Node{{Name: "a", Client: node(shared2)}, {Name: "b", Client: node(shared2)},
			{Name: "c", Client: node(wrong)}},
		Targets: targets, Duration: 300 * time.Millisecond,
	})
	fmt.Println("wrong store passed:", r.Passed, "duplicates found:", r.Targets[0].Violations[verify.Unique] > 0)
	// Output:
	// shared store passed: true
	// wrong store passed: false duplicates found: true
}

// A Checker fed by a driver of your own: here, two nodes answer the same
// serial.
func ExampleChecker() {
	c, err := verify.NewChecker(verify.CheckerOptions{
		Nodes:   []string{"10.0.0.1:8080", "10.0.0.2:8080"},
		Targets: []verify.Target{{Name: "invoice", Kind: verify.Serial, Template: "INV-@{seq:invoice,width=6}"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Serials(0, 0, 0, []string{"INV-000001", "INV-000002"})
	c.Serials(0, 1, 0, []string{"INV-000002", "INV-3"})
	r := c.Report()
	for _, v := range r.Targets[0].Examples {
		fmt.Println(v)
	}
	r.Elapsed = time.Second
	r.WriteText(os.Stdout)
	// Output:
	// unique invoice: INV-000002 from 10.0.0.2:8080 (client 0): answered before (compared by 64-bit hash)
	// template invoice: INV-3 from 10.0.0.2:8080 (client 0): does not have the shape of INV-@{seq:invoice,width=6}
	// verified 4 values from 2 nodes in 1s (4/s), 2 requests, 0 errors
	// TARGET   KIND    VALUES  ERRORS  CHECKS
	// invoice  serial  4       0       unique FAIL (1), template FAIL (1)
	// VIOLATION unique invoice: INV-000002 from 10.0.0.2:8080 (client 0): answered before (compared by 64-bit hash)
	// VIOLATION template invoice: INV-3 from 10.0.0.2:8080 (client 0): does not have the shape of INV-@{seq:invoice,width=6}
	// FAIL: 2 violations
}
