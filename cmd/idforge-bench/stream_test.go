package main

import (
	"testing"

	"github.com/idforge/idforge"
)

func TestParseStreamURL(t *testing.T) {
	for _, tc := range []struct {
		url, addr, key string
		batch          int
		ok             bool
	}{
		{"grpc://127.0.0.1:9090/order?batch=500", "127.0.0.1:9090", "order", 500, true},
		{"grpc://127.0.0.1:9090/order", "127.0.0.1:9090", "order", idforge.MaxCount, true},
		{"grpc://127.0.0.1:9090/", "", "", 0, false},
		{"grpc:///order", "", "", 0, false},
		{"grpc://127.0.0.1:9090/order?batch=x", "", "", 0, false},
	} {
		addr, key, batch, err := parseStreamURL(tc.url)
		if (err == nil) != tc.ok || tc.ok && (addr != tc.addr || key != tc.key || batch != tc.batch) {
			t.Errorf("parseStreamURL(%q) = %q, %q, %d, %v", tc.url, addr, key, batch, err)
		}
	}
}
