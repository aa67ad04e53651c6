package node

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/plugin"
	_ "github.com/idforge/idforge/sequence/sqlrow"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/memstore"
)

// keptStore is a memstore that outlives the nodes opened on it, as a
// database does.
type keptStore struct{ *memstore.Store }

func (keptStore) Close() error { return nil }

// Every change the fingerprint guard covers is refused at start with
// ErrUnsafeChange, saying what changed and what to do instead; an
// unchanged configuration (or a password rotated) starts.
func TestFingerprintGuard(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		st := keptStore{memstore.New()}
		testFingerprintGuard(t, func(s *Settings) {
			s.OpenStore = func(context.Context, string, store.Options) (idforge.Store, error) { return st, nil }
		})
	})
	// The default store: SQLite in the data directory.
	t.Run("sqlite", func(t *testing.T) { testFingerprintGuard(t, func(*Settings) {}) })
}

func testFingerprintGuard(t *testing.T, withStore func(*Settings)) {
	dir := t.TempDir()
	member := func(db string) string {
		return "sqlrow+sqlite://" + filepath.Join(dir, db) + "?name=s"
	}
	base := func() Settings {
		return Settings{
			DataDir: filepath.Join(dir, "node"), Logger: quiet, Layout: "twitter",
			Getenv: func(v string) string {
				return map[string]string{"K1": "a secret of 16+ bytes", "K2": "another secret, 16+ bytes"}[v]
			},
			Sources: []Source{
				{Name: "bal", Balance: []string{member("a.db"), member("b.db")}},
				{Name: "exp", URL: member("c.db"), Expand: 4},
			},
			Keys: []Key{{Key: idforge.Key{Name: "hidden", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1},
				Format: "feistel:bits=40+base62:min=7", FormatKey: "env:K1"}},
			Plugins: []plugin.Config{{Kind: "obfuscate", Keys: []string{"masked"}, Settings: plugin.ObfuscateConfig{Bits: 40, Key: "env:K1"}}},
		}
	}
	open := func(s Settings) error {
		withStore(&s)
		n, err := Open(context.Background(), s)
		if err == nil {
			n.Close()
		}
		return err
	}
	if err := open(base()); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if err := open(base()); err != nil {
		t.Fatalf("unchanged restart: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		says []string
	}{
		{"layout", func(s *Settings) { s.Layout = "sonyflake" }, []string{`snowflake "layout"`, "keep the layout"}},
		{"members swapped", func(s *Settings) { s.Sources[0].Balance = []string{member("b.db"), member("a.db")} }, []string{`source "bal"`, "order"}},
		{"member replaced", func(s *Settings) { s.Sources[0].Balance[1] = member("d.db") }, []string{`source "bal"`, "new name"}},
		{"member added", func(s *Settings) {
			s.Sources[0].Balance = []string{member("a.db"), member("b.db"), member("c2.db"), member("d.db")}
		}, []string{"balanced over 4 members"}},
		{"expansion bits", func(s *Settings) { s.Sources[1].Expand = 3 }, []string{`source "exp"`, "expanded by 4 bits", "expanded by 3 bits"}},
		{"balanced instead of single", func(s *Settings) {
			s.Sources[1].URL, s.Sources[1].Balance = "", []string{member("c.db"), member("e.db")}
		}, []string{`source "exp"`}},
		{"format secret", func(s *Settings) { s.Keys[0].FormatKey = "env:K2" }, []string{`format "hidden"`, "with its secret", "format_key"}},
		{"format bits", func(s *Settings) { s.Keys[0].Format = "feistel:bits=41+base62:min=7" }, []string{`format "hidden"`, "bits=41"}},
		{"format removed", func(s *Settings) { s.Keys[0].Format, s.Keys[0].FormatKey = "", "" }, []string{`format "hidden"`, "no format"}},
		{"obfuscate secret", func(s *Settings) { s.Plugins[0].Settings = plugin.ObfuscateConfig{Bits: 40, Key: "env:K2"} }, []string{`plugin "obfuscate"`, "secrets"}},
		{"obfuscate bits", func(s *Settings) { s.Plugins[0].Settings = plugin.ObfuscateConfig{Bits: 41, Key: "env:K1"} }, []string{`plugin "obfuscate"`, "bits=41"}},
		{"obfuscate removed", func(s *Settings) { s.Plugins = nil }, []string{`plugin "obfuscate"`, "no obfuscate plugin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(&s)
			err := open(s)
			if !errors.Is(err, idforge.ErrUnsafeChange) {
				t.Fatalf("start after changing the %s: %v, want ErrUnsafeChange", tc.name, err)
			}
			for _, w := range tc.says {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal %q does not say %q", err, w)
				}
			}
		})
	}
	// What does not change values starts: the same secret, inline rather
	// than from the environment (a rotated password: fingerprint's tests).
	s := base()
	s.Keys[0].FormatKey = "a secret of 16+ bytes"
	if err := open(s); err != nil {
		t.Fatalf("a start that changes no value: %v", err)
	}
	if err := open(base()); err != nil {
		t.Fatalf("the first configuration again: %v", err)
	}
}

// A serial first used gap-free counts its numbers apart from any source;
// the same serial issued plainly by a node would repeat them, so that
// node is refused, and the gap-free configuration still starts.
func TestGaplessSerialGuard(t *testing.T) {
	dir := t.TempDir()
	open := func(gapless bool) error {
		s := Settings{DataDir: dir, Logger: quiet,
			Sources: []Source{{Name: "inv", URL: "sqlrow+sqlite://" + filepath.Join(dir, "inv.db") + "?name=inv"}},
			Serials: []idforge.Serial{{Name: "invoice", Template: "INV-@{seq:inv,width=6}", Gapless: gapless}}}
		n, err := Open(context.Background(), s)
		if err == nil {
			n.Close()
		}
		return err
	}
	if err := open(true); err != nil {
		t.Fatalf("first start, gap-free: %v", err)
	}
	err := open(false)
	if !errors.Is(err, idforge.ErrUnsafeChange) || !strings.Contains(err.Error(), `serial "invoice"`) || !strings.Contains(err.Error(), "gap-free") {
		t.Fatalf("the same serial plain: %v, want ErrUnsafeChange naming it", err)
	}
	if err := open(true); err != nil {
		t.Fatalf("gap-free again: %v", err)
	}
}
