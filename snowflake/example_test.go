package snowflake_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/idforge/idforge/snowflake"
)

func ExampleLayout_Explain() {
	twitter, _ := snowflake.Preset("twitter")
	p, err := twitter.Explain(1541815603606036480)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Time.Format(time.RFC3339Nano))
	fmt.Println("datacenter", p.Datacenter, "worker", p.Worker, "sequence", p.Sequence)
	// Output:
	// 2022-06-28T16:07:40.105Z
	// datacenter 11 worker 26 sequence 0
}

func ExampleLayout_Make() {
	sony, _ := snowflake.Preset("sonyflake")
	id, err := sony.Make(snowflake.Parts{
		Time:     time.Date(2024, 3, 15, 10, 20, 30, 120e6, time.UTC),
		Sequence: 7,
		Worker:   0x1234,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(id)
	p, _ := sony.Explain(id)
	fmt.Println(p.Ticks, p.Sequence, p.Worker, p.Time)
	// Output:
	// 504941236130878004
	// 30096843012 7 4660 2024-03-15 10:20:30.12 +0000 UTC
}

func ExampleParseLayout() {
	l, err := snowflake.ParseLayout("type:2=1, time:40, worker:8, sequence:13, unit=1ms, epoch=2024-01-01T00:00:00Z")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l)
	fmt.Println("workers:", l.MaxWorker()+1, "per second:", l.CapPerSecond())
	fmt.Println("expires:", l.Expires().Format(time.RFC3339))

	_, err = snowflake.ParseLayout("time:41,worker:10,sequence:11,unit=1ms,epoch=0")
	fmt.Println(err)
	// Output:
	// type:2=1,time:40,worker:8,sequence:13,unit=1ms,epoch=2024-01-01T00:00:00Z
	// workers: 256 per second: 8.192e+06
	// expires: 2058-11-03T19:53:47Z
	// idforge: invalid snowflake layout: bits sum to 62, want 63
}

func ExamplePreset() {
	for _, name := range snowflake.Presets() {
		l, _ := snowflake.Preset(name)
		fmt.Printf("%-22s %9.0f IDs/s per worker, until %s\n", name, l.CapPerSecond(), l.Expires().Format("2006-01-02"))
	}
	// Output:
	// js-safe                    25600 IDs/s per worker, until 2111-02-08
	// sonyflake                  25600 IDs/s per worker, until 2188-11-16
	// twitter                  4096000 IDs/s per worker, until 2080-07-10
	// vesta-max-peak           1048576 IDs/s per worker, until 2049-01-09
	// vesta-min-granularity    1024000 IDs/s per worker, until 2049-11-03
}

func ExampleNew() {
	g, err := snowflake.New(snowflake.Settings{
		Datacenter: 1,
		Worker:     7,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	id, err := g.Next(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := g.Layout().Explain(id)
	fmt.Println(g.Layout().Name, "datacenter", p.Datacenter, "worker", p.Worker)
	// Output: twitter datacenter 1 worker 7
}
