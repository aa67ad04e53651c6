package issuer_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/memstore"
)

// A key's step changes without touching its max_id; a retired key issues
// nothing, and its name is never created again.
func ExampleIssuer_RetireKey() {
	ctx := context.Background()
	iss := issuer.New(memstore.New(), nil, issuer.Settings{})
	defer iss.Close()
	iss.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	id, _ := iss.Next(ctx, "order")
	fmt.Println("issued", id)

	step := int64(500)
	k, _ := iss.UpdateKey(ctx, "order", idforge.KeyChange{Step: &step})
	fmt.Println("step", k.Step, "max_id", k.MaxID)

	iss.RetireKey(ctx, "order")
	_, err := iss.Next(ctx, "order")
	fmt.Println(errors.Is(err, idforge.ErrRetired))
	err = iss.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	fmt.Println(errors.Is(err, idforge.ErrKeyExists))
	// Output:
	// issued 1
	// step 500 max_id 101
	// true
	// true
}
