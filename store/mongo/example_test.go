package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/mongo"
)

// An embedding program opens the store directly. The database must have
// been migrated (`idforge migrate`, or Store.Migrate). (Not run: it needs
// a replica set.)
func ExampleOpen() {
	ctx := context.Background()
	cfg, err := mongo.ParseURL("mongodb://idforge:secret@db1:27017,db2:27017,db3:27017/idforge?replicaSet=rs0&authSource=admin&timeout=2s")
	if err != nil {
		log.Fatal(err)
	}
	st, err := mongo.Open(ctx, cfg)
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

// ParseURL writes with w=majority and reads with the majority read
// concern unless the URL says otherwise, and refuses a URL that weakens
// them without saying so explicitly.
func ExampleParseURL() {
	cfg, err := mongo.ParseURL("mongodb://db1,db2,db3/ids?replicaSet=rs0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Database, cfg.Client.WriteConcern.W, cfg.Client.ReadConcern.Level)

	_, err = mongo.ParseURL("mongodb://db1,db2,db3/ids?replicaSet=rs0&w=1")
	fmt.Println(errors.Is(err, idforge.ErrInvalidArgument))

	cfg, err = mongo.ParseURL("mongodb://db1,db2,db3/ids?replicaSet=rs0&w=1&allow_weak_writes=true")
	fmt.Println(cfg.Client.WriteConcern.W, err)
	// Output:
	// ids majority majority
	// true
	// 1 <nil>
}
