package plugin

import (
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idforge/idforge"
)

func TestNames(t *testing.T) {
	if got, want := Names(), []string{"history", "obfuscate", "rate"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

// Check refuses what a config file can get wrong, before anything opens.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string // "" for a valid declaration
	}{
		{"history", Config{Kind: "history"}, ""},
		{"history to a file", Config{Kind: "history", Settings: HistoryConfig{File: "h.jsonl"}}, ""},
		{"rate", Config{Kind: "rate", Keys: []string{"order"}}, ""},
		{"obfuscate", Config{Kind: "obfuscate", Settings: ObfuscateConfig{Bits: 40, Key: "env:K"}}, ""},
		{"unknown kind", Config{Kind: "quota"}, `unknown plugin kind "quota" (kinds: history, obfuscate, rate)`},
		{"no kind", Config{}, `unknown plugin kind ""`},
		{"rate with a file", Config{Kind: "rate", Settings: HistoryConfig{File: "x"}}, "file is for history, not rate"},
		{"obfuscate with a file", Config{Kind: "obfuscate", Settings: HistoryConfig{File: "x"}}, "file is for history, not obfuscate"},
		{"obfuscate without key", Config{Kind: "obfuscate", Settings: ObfuscateConfig{Bits: 8}}, "obfuscate needs bits (1..63) and key"},
		{"obfuscate without bits", Config{Kind: "obfuscate", Settings: ObfuscateConfig{Key: "k"}}, "obfuscate needs bits"},
		{"obfuscate too wide", Config{Kind: "obfuscate", Settings: ObfuscateConfig{Bits: 64, Key: "k"}}, "obfuscate needs bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.c)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check(%+v) = %v, want ErrInvalidArgument saying %q", tc.c, err, tc.want)
			}
		})
	}
}

// Build makes working plugins of every kind, limited to their keys.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{"env:K": "a key of sixteen+ bytes"}
	env := Env{Metrics: prometheus.NewRegistry(), Dir: dir, Secret: func(v string) ([]byte, error) {
		if s, ok := secrets[v]; ok || !strings.HasPrefix(v, "env:") {
			return []byte(cmp.Or(s, v)), nil
		}
		return nil, errors.New("environment variable K2 is not set")
	}}
	var plugins []Plugin
	for _, c := range []Config{
		{Kind: "history", Settings: HistoryConfig{File: "history.jsonl"}, Order: 3},
		{Kind: "rate", Order: 2},
		{Kind: "obfuscate", Keys: []string{"hidden"}, Settings: ObfuscateConfig{Bits: 32, Key: "env:K"}, Order: 1},
	} {
		p, closer, err := Build(c, env)
		if err != nil {
			t.Fatalf("Build(%+v): %v", c, err)
		}
		if closer != nil {
			defer closer.Close()
		}
		plugins = append(plugins, p)
	}
	ch := NewChain(nil, plugins...)
	ctx := context.Background()
	plain, err := ch.Run(ctx, Call{Key: "order", Count: 1}, func() ([]int64, error) { return []int64{5}, nil })
	if err != nil || plain[0] != 5 {
		t.Fatalf("order (not obfuscated): %v, %v", plain, err)
	}
	hidden, err := ch.Run(ctx, Call{Key: "hidden", Count: 1}, func() ([]int64, error) { return []int64{5}, nil })
	if err != nil || hidden[0] == 5 {
		t.Fatalf("hidden (obfuscated): %v, %v", hidden, err)
	}
	history, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil || !strings.Contains(string(history), `"key":"order"`) {
		t.Fatalf("history file in the data directory: %q, %v", history, err)
	}

	if _, _, err := Build(Config{Kind: "rate"}, env); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("a second rate plugin on one registry: %v, want ErrInvalidArgument", err)
	}
	if _, _, err := Build(Config{Kind: "obfuscate", Settings: ObfuscateConfig{Bits: 32, Key: "env:K2"}}, env); err == nil || !strings.Contains(err.Error(), "K2") || !strings.Contains(err.Error(), "plugin obfuscate") {
		t.Errorf("missing secret: %v, want the variable and the plugin named", err)
	}
	if _, _, err := Build(Config{Kind: "obfuscate", Settings: ObfuscateConfig{Bits: 32, Key: "short"}}, env); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("short key: %v, want ErrInvalidArgument", err)
	}
	if _, _, err := Build(Config{Kind: "history", Settings: HistoryConfig{File: filepath.Join(dir, "no", "such", "dir", "h")}}, env); err == nil || !strings.HasPrefix(err.Error(), "plugin history: ") {
		t.Errorf("history file that cannot be opened: %v", err)
	}
	if _, _, err := Build(Config{Kind: "nope"}, env); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestRegisterPanics(t *testing.T) {
	build := func(struct{}, int, Env) (Plugin, io.Closer, error) { return nil, nil, nil }
	for name, register := range map[string]func(){
		"empty name": func() { Register("", Kind[struct{}]{New: build}) },
		"nil New":    func() { Register("x-nil", Kind[struct{}]{}) },
		"twice":      func() { Register("history", Kind[struct{}]{New: build}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			register()
		})
	}
}
