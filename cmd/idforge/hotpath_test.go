package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
)

// discardWriter is a reusable http.ResponseWriter that keeps nothing but
// the status, so that a benchmark measures the handler, not a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) reset()                      { clear(d.h); d.code = http.StatusOK }

// BenchmarkHotPath serves Leaf's segment endpoint, GET /v1/ids/{key} and
// GET /v1/ids/{key}?count=10000&form=ranges through the node's whole HTTP
// handler (metrics, routing, no authentication) beside a trivial counter
// handler, calling ServeHTTP directly: run with -benchmem to see what a
// request allocates.
//
//	go test -run '^$' -bench HotPath -benchmem ./cmd/idforge
func BenchmarkHotPath(b *testing.B) {
	cfg := defaultConfig()
	cfg.Data = b.TempDir()
	cfg.LogLevel = "error"
	ctx := context.Background()
	n, err := openNode(ctx, cfg, newLogger(io.Discard, "error"), cfg.owner(""), env(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	if err := n.Issuer().CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1_000_000, MaxID: 1}); err != nil {
		b.Fatal(err)
	}
	h := httpHandler(n, newLogger(io.Discard, "error"), nil)
	var counter atomic.Int64
	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(strconv.AppendInt(nil, counter.Add(1), 10))
	})
	for _, c := range []struct {
		name, path string
		h          http.Handler
	}{
		{"trivial", "/", trivial},
		{"leaf", "/api/segment/get/order", h},
		{"v1ids", "/v1/ids/order", h},
		{"ranges", "/v1/ids/order?count=10000&form=ranges", h},
	} {
		b.Run(c.name, func(b *testing.B) {
			r, err := http.NewRequest("GET", c.path, nil)
			if err != nil {
				b.Fatal(err)
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				c.h.ServeHTTP(w, r)
				if w.code != http.StatusOK {
					b.Fatalf("%s: %d", c.path, w.code)
				}
			}
		})
	}
}
