package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
)

// runStream loads grpc://HOST:PORT/KEY?batch=N for d with conns streams
// of one client (see the package doc); a URL it cannot read exits.
func runStream(rawURL string, conns int, d time.Duration) result {
	addr, key, batch, err := parseStreamURL(rawURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "idforge-bench:", err)
		os.Exit(2)
	}
	c, err := client.NewGRPC([]string{addr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "idforge-bench:", err)
		os.Exit(1)
	}
	defer c.Close()
	return load(conns, d, func(ctx context.Context) (lat []time.Duration, errs int) {
		for ctx.Err() == nil {
			t0 := time.Now()
			for ids, err := range c.Stream(ctx, key, batch) {
				if err != nil {
					if ctx.Err() == nil {
						errs++
					}
					break
				}
				if len(ids) == 0 {
					errs++
				}
				now := time.Now()
				lat = append(lat, now.Sub(t0))
				t0 = now
			}
		}
		return lat, errs
	})
}

// parseStreamURL reads grpc://HOST:PORT/KEY?batch=N.
func parseStreamURL(raw string) (addr, key string, batch int, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", 0, err
	}
	key = strings.TrimPrefix(u.Path, "/")
	batch = idforge.MaxCount
	if b := u.Query().Get("batch"); b != "" {
		if batch, err = strconv.Atoi(b); err != nil {
			return "", "", 0, fmt.Errorf("%s: batch: %w", raw, err)
		}
	}
	if u.Host == "" || key == "" {
		return "", "", 0, fmt.Errorf("%s: want grpc://HOST:PORT/KEY?batch=N", raw)
	}
	return u.Host, key, batch, nil
}
