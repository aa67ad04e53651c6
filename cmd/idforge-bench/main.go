// Command idforge-bench loads idforge endpoints over HTTP and reports
// throughput and latency percentiles (p50, p99, p99.9, max), one line per
// URL, all measured in the same run so they compare side by side.
//
//	idforge-bench -c 32 -d 10s http://127.0.0.1:8080/healthz http://127.0.0.1:8080/api/segment/get/order
//
// Each of the -c workers sends one request at a time on a keep-alive
// connection (a closed loop), so latency includes queueing in the server.
//
// A URL grpc://HOST:PORT/KEY?batch=N loads the gRPC API's Stream instead:
// -c streams of key's IDs in batches of N (default idforge.MaxCount), read
// through the Go client's Stream (ranges, expanded in the client) on one
// connection; req/s counts batches, the latencies are between batches.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

func main() {
	conns := flag.Int("c", 32, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration per URL")
	warm := flag.Duration("warmup", time.Second, "unmeasured warm-up per URL")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: idforge-bench [-c N] [-d DURATION] URL...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *conns < 1 || *dur <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "req/s\tp50\tp99\tp99.9\tmax\terrors\tURL\t")
	for _, url := range flag.Args() {
		run := runHTTP
		if strings.HasPrefix(url, "grpc://") {
			run = runStream
		}
		run(url, *conns, *warm) // warm-up: connections, segments, caches
		r := run(url, *conns, *dur)
		fmt.Fprintf(tw, "%.0f\t%v\t%v\t%v\t%v\t%d\t%s\t\n", r.rate, r.pct(0.50), r.pct(0.99), r.pct(0.999), r.pct(1), r.errors, url)
	}
	tw.Flush()
}

type result struct {
	lat    []time.Duration
	errors int
	rate   float64
}

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(p*float64(len(r.lat))+0.5) - 1
	i = min(max(i, 0), len(r.lat)-1)
	return r.lat[i].Round(time.Microsecond)
}

func runHTTP(url string, conns int, d time.Duration) result {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return load(conns, d, func(ctx context.Context) (lat []time.Duration, errs int) {
		for ctx.Err() == nil {
			t0 := time.Now()
			resp, err := client.Get(url)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				if ctx.Err() == nil {
					errs++
				}
				continue
			}
			lat = append(lat, time.Since(t0))
		}
		return lat, errs
	})
}

// load runs worker on conns goroutines for d (until its context ends)
// and gathers the latencies and errors each returns.
func load(conns int, d time.Duration, worker func(ctx context.Context) (lat []time.Duration, errs int)) result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu  sync.Mutex
		all result
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range conns {
		wg.Go(func() {
			lat, errs := worker(ctx)
			mu.Lock()
			all.lat = append(all.lat, lat...)
			all.errors += errs
			mu.Unlock()
		})
	}
	wg.Wait()
	all.rate = float64(len(all.lat)) / time.Since(start).Seconds()
	slices.Sort(all.lat)
	return all
}
