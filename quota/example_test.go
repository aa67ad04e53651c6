package quota_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/store/memstore"
)

// A quota of 3 IDs per day on the key order, defined through a Manager
// (as POST /v1/quotas does) and applied by its Limiter in the issuer's
// plugin chain: a call over the rest of the quota is refused whole, with
// idforge.ErrRejected, and takes nothing.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	lim := quota.NewLimiter(nil)
	defer lim.Close()
	m, err := quota.NewManager(ctx, lim, st, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Plugins: plugin.NewChain(nil, lim)})
	defer iss.Close()
	if err := m.Define(ctx, quota.Spec{Name: "orders-per-day", Keys: []string{"order"}, Limit: 3, Per: "day"}); err != nil {
		panic(err)
	}
	ids, err := iss.NextN(ctx, "order", 2)
	fmt.Println(ids, err)
	_, err = iss.NextN(ctx, "order", 2)
	fmt.Println(errors.Is(err, idforge.ErrRejected))
	ids, err = iss.NextN(ctx, "order", 1)
	fmt.Println(ids, err)
	// Output:
	// [1 2] <nil>
	// true
	// [3] <nil>
}
