package idforge_test

import (
	"errors"
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
