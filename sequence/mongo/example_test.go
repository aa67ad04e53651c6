package mongo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/mongo"
)

// A source on the document "orders" of the collection idforge_sequence,
// created (holding 0) when missing. (Not run: it needs a replica set.)
func Example() {
	ctx := context.Background()
	src, err := sequence.Open(ctx, "mongodb://db1,db2,db3/idforge?replicaSet=rs0&name=orders")
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	v, err := src.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v) // 1, then 2, 3 … across every client of the document
}
