package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/mysql"
)

// An embedding program opens the store directly. The database must have
// been migrated (`idforge migrate`, or Store.Migrate) or hold Leaf's
// leaf_alloc table. (Not run: it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	cfg, err := mysql.ParseURL("mysql://idforge:secret@db.internal:3306/idforge?max_open_conns=20&timeout=2s")
	if err != nil {
		log.Fatal(err)
	}
	st, err := mysql.Open(ctx, cfg)
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

// After a fail-over to a replica that may lack the last claims, every
// claim fails with idforge.ErrStoreFailedOver until an operator repairs:
// the keys are raised above every ID handed out, and the server the store
// now reaches is accepted. This is what `idforge keys repair` does. (Not
// run: it needs a server.)
func ExampleStore_RepairFailover() {
	ctx := context.Background()
	cfg, err := mysql.ParseURL("mysql://idforge:secret@db1.internal:3306,db2.internal:3306/idforge")
	if err != nil {
		log.Fatal(err)
	}
	st, err := mysql.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	if _, err := st.ClaimSegment(ctx, "orders", 0); !errors.Is(err, idforge.ErrStoreFailedOver) {
		return // no fail-over (or another error)
	}
	state, err := st.FailoverState(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("claims were made on %s; this is %s\n", state.Recorded, state.Current)
	// 123456789: above every ID any node handed out (see claimed_up_to in
	// each node's GET /v1/keys).
	done, err := st.RepairFailover(ctx, 123456789, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range done.Raised {
		fmt.Printf("%s: max_id %d -> %d\n", k.Key, k.From, k.To)
	}
}
