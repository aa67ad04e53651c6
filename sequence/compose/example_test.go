package compose_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence/compose"
	_ "github.com/idforge/idforge/sequence/redis" // redis:// sources
)

// Two counters combined by Balanced (value << 1 | index), expanded in
// memory by Expanded (× 4). Each pair of lines comes from one inner
// value: 1 of counter 0 gives 2 = 1<<1|0, that is 8 … 11; 1 of counter 1
// gives 3, that is 12 … 15.
func Example() {
	ctx := context.Background()
	bal, err := compose.NewBalanced([]idforge.Generator{&mem{}, &mem{}}, compose.BalancedOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// NoPrefetch keeps the example's output fixed; a server keeps the
	// prefetcher on.
	exp, err := compose.NewExpanded(bal, compose.ExpandedOptions{MemoryBits: 2, NoPrefetch: true})
	if err != nil {
		log.Fatal(err)
	}
	defer exp.Close()
	ids, err := exp.NextN(ctx, 8)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ids)
	// Output: [8 9 10 11 12 13 14 15]
}

// Four Redis counters on two servers, the high-availability set-up of
// JD's (京东) logistics serial-number platform, as a configuration would
// list them. Every node lists the same URLs in the same order.
func ExampleOpenBalanced() {
	ctx := context.Background()
	bal, err := compose.OpenBalanced(ctx, []string{
		"redis://redis-a:6379/0?key=orders:0",
		"redis://redis-a:6379/0?key=orders:1",
		"redis://redis-b:6379/0?key=orders:2",
		"redis://redis-b:6379/0?key=orders:3",
	}, compose.BalancedOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer bal.Close() // closes the four sources
	gen, err := compose.NewExpanded(bal, compose.ExpandedOptions{MemoryBits: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer gen.Close()
	id, err := gen.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id > 0)
}

// Status tells operators how a Balanced fares: here its second counter
// fails (a closed generator), so the first call that reaches it ejects
// it and the source is degraded until the rescue time has passed.
func ExampleBalanced_Status() {
	ctx := context.Background()
	down := &closedGen{}
	bal, err := compose.NewBalanced([]idforge.Generator{&mem{}, down},
		compose.BalancedOptions{Names: []string{"a", "b"}, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		if _, err := bal.Next(ctx); err != nil {
			log.Fatal(err)
		}
	}
	st := bal.Status()
	fmt.Println(st.Kind, st.Health, st.Calls, st.Failures)
	for _, m := range st.Members {
		fmt.Println(strings.TrimSpace(fmt.Sprint(m.Name, " ", m.State, " ", m.Calls, " ", m.Failures, " ", m.LastError)))
	}
	// Output:
	// balanced degraded 3 1
	// a admitted 2 0
	// b ejected 1 1 error: b is closed
}

// closedGen is a generator that has been closed.
type closedGen struct{}

func (closedGen) Next(context.Context) (int64, error) { return 0, errors.New("b is closed") }
