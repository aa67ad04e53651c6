package sequence_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/all" // every backend
)

// Open a source from a URL and take a value; the scheme picks the backend.
func ExampleOpen() {
	ctx := context.Background()
	src, err := sequence.Open(ctx, "redis://127.0.0.1:6379/0?key=orders")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	id, err := src.Next(ctx)
	fmt.Println(id, err)
}

// A date-stamped order number as a Redis scheme makes it: yyMMddHHmmss
// plus a per-second counter of at most
// 16383, in Shanghai time, with the mark file in the node's data
// directory.
func ExampleOpenCounter() {
	ctx := context.Background()
	c, err := sequence.OpenCounter(ctx,
		"redis://127.0.0.1:6379/0?name=order_seq&period=second&cap=16383&tz=Asia/Shanghai&dir=/var/lib/idforge")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	n, period, err := c.Next(ctx, time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s%05d\n", period.Format("060102150405"), n)
}
