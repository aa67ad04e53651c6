package idforge_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

func TestValidateKeyName(t *testing.T) {
	good := []string{"a", "order", "biz.order-2024:cn_north", strings.Repeat("k", idforge.MaxKeyLen)}
	for _, name := range good {
		if err := idforge.ValidateKeyName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	bad := []string{"", " ", "a b", "a/b", "订单", "a\x00", "a?b", "a%20", strings.Repeat("k", idforge.MaxKeyLen+1)}
	for _, name := range bad {
		if err := idforge.ValidateKeyName(name); !errors.Is(err, idforge.ErrInvalidKey) {
			t.Errorf("%q: %v, want ErrInvalidKey", name, err)
		}
	}
}

func TestKeyValidate(t *testing.T) {
	seg := idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}
	snow := idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}
	tests := []struct {
		name string
		key  idforge.Key
		err  error
	}{
		{"segment", seg, nil},
		{"snowflake", snow, nil},
		{"largest step", with(seg, func(k *idforge.Key) { k.Step = idforge.MaxStep }), nil},
		{"bad name", with(seg, func(k *idforge.Key) { k.Name = "a b" }), idforge.ErrInvalidKey},
		{"unknown strategy", with(seg, func(k *idforge.Key) { k.Strategy = "uuid" }), idforge.ErrInvalidArgument},
		{"no strategy", with(seg, func(k *idforge.Key) { k.Strategy = "" }), idforge.ErrInvalidArgument},
		{"step 0", with(seg, func(k *idforge.Key) { k.Step = 0 }), idforge.ErrInvalidArgument},
		{"step too big", with(seg, func(k *idforge.Key) { k.Step = idforge.MaxStep + 1 }), idforge.ErrInvalidArgument},
		{"start 0", with(seg, func(k *idforge.Key) { k.MaxID = 0 }), idforge.ErrInvalidArgument},
		{"start negative", with(seg, func(k *idforge.Key) { k.MaxID = math.MinInt64 }), idforge.ErrInvalidArgument},
		{"step negative", with(seg, func(k *idforge.Key) { k.Step = math.MinInt64 }), idforge.ErrInvalidArgument},
		{"first segment ends at the largest ID", with(seg, func(k *idforge.Key) { k.MaxID = idforge.MaxSegmentID - 999 }), nil},
		{"first segment one past the largest ID", with(seg, func(k *idforge.Key) { k.MaxID = idforge.MaxSegmentID - 998 }), idforge.ErrInvalidArgument},
		{"start at the largest int64", with(seg, func(k *idforge.Key) { k.MaxID = math.MaxInt64 }), idforge.ErrInvalidArgument},
		{"step 1 at the largest ID", with(seg, func(k *idforge.Key) { k.Step, k.MaxID = 1, idforge.MaxSegmentID }), nil},
		{"largest step at the top", with(seg, func(k *idforge.Key) { k.Step, k.MaxID = idforge.MaxStep, math.MaxInt64-idforge.MaxStep }), nil},
		{"snowflake with step", with(snow, func(k *idforge.Key) { k.Step = 5 }), idforge.ErrInvalidArgument},
		{"long description", with(seg, func(k *idforge.Key) { k.Description = strings.Repeat("d", 257) }), idforge.ErrInvalidArgument},
		{"invalid UTF-8", with(seg, func(k *idforge.Key) { k.Description = "\xff" }), idforge.ErrInvalidArgument},
	}
	for _, tt := range tests {
		err := tt.key.Validate()
		if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.err)
		}
	}
}

// A key whose first segment cannot be claimed is refused at creation, with
// the range of starts that fits its step: before, it was accepted and
// every issue failed.
func TestKeyValidateSaysWhatFits(t *testing.T) {
	k := idforge.Key{Name: "bad", Strategy: idforge.StrategySegment, Step: 1000, MaxID: math.MaxInt64}
	err := k.Validate()
	if !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("start MaxInt64: %v, want ErrInvalidArgument", err)
	}
	for _, want := range []string{`"bad"`, "start 9223372036854775807", "[1, 9223372036854774807]", "step 1000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// ValidateUpTo holds a key's first segment within a smaller ceiling, the
// largest ID a permuting format can show.
func TestKeyValidateUpTo(t *testing.T) {
	const last = 1<<8 - 1 // an 8-bit permutation
	seg := idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}
	tests := []struct {
		name string
		key  idforge.Key
		err  error
		says string
	}{
		{"fits", seg, nil, ""},
		{"ends at the ceiling", with(seg, func(k *idforge.Key) { k.MaxID = last - 99 }), nil, ""},
		{"one past the ceiling", with(seg, func(k *idforge.Key) { k.MaxID = last - 98 }), idforge.ErrInvalidArgument, "[1, 156]"},
		{"step longer than the space", with(seg, func(k *idforge.Key) { k.Step = 1000 }), idforge.ErrInvalidArgument, "step 1000 out of range [1, 255]"},
		{"snowflake ignores it", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, nil, ""},
	}
	for _, tt := range tests {
		err := tt.key.ValidateUpTo(last)
		if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) || err != nil && !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want %v saying %q", tt.name, err, tt.err, tt.says)
		}
	}
	// A ceiling above what a claim can hold changes nothing.
	top := with(seg, func(k *idforge.Key) { k.Step, k.MaxID = 1, math.MaxInt64 })
	if err := top.ValidateUpTo(math.MaxInt64); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("start MaxInt64 under ceiling MaxInt64: %v, want ErrInvalidArgument", err)
	}
}

func with(k idforge.Key, f func(*idforge.Key)) idforge.Key {
	f(&k)
	return k
}

func TestParseStrategy(t *testing.T) {
	for _, s := range []string{"segment", "snowflake"} {
		if got, err := idforge.ParseStrategy(s); err != nil || string(got) != s {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	if _, err := idforge.ParseStrategy("Segment"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("case-sensitive: %v", err)
	}
}

// TestREADMECountLimit: both READMEs give the count limit of /v1/ids and
// of invalid_count as idforge.MaxCount, written one way.
func TestREADMECountLimit(t *testing.T) {
	limit := fmt.Sprintf("%d,%03d", idforge.MaxCount/1000, idforge.MaxCount%1000)
	for file, from := range map[string]string{"docs/http-api.md": "1 to ", "docs/zh-CN/http-api.md": "1 到 "} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range []string{"| `GET /v1/ids/{key}?count=N", "| `invalid_count` |"} {
			found := false
			for _, line := range strings.Split(string(raw), "\n") {
				if strings.HasPrefix(line, row) {
					found = true
					if !strings.Contains(line, from+limit) {
						t.Errorf("%s: %q does not say %q", file, line, from+limit)
					}
				}
			}
			if !found {
				t.Errorf("%s: no row %q", file, row)
			}
		}
	}
}
