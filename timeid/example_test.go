package timeid_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/timeid"
)

func ExampleUUIDv7Time() {
	t, err := timeid.UUIDv7Time("017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
	fmt.Println(t, err)
	// Output: 2022-02-22 19:22:22 +0000 UTC <nil>
}

func ExampleNewULID() {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	g, _ := timeid.NewULID(timeid.Settings{Clock: fakeclock.New(at)})
	ids, _ := g.NextN(context.Background(), 3)
	t, _ := timeid.Time(ids[2])
	fmt.Println(len(ids[0]), ids[0] < ids[1] && ids[1] < ids[2], t)
	// Output: 26 true 2025-04-13 12:00:00 +0000 UTC
}
