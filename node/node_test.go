package node

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/plugin"
	_ "github.com/idforge/idforge/store/sqlite"
)

var quiet = slog.New(slog.DiscardHandler)

func TestSharedStore(t *testing.T) {
	for url, want := range map[string]bool{
		"sqlite:///data/idforge.db":              false,
		"memory:":                                false,
		"mysql://root@127.0.0.1:3306/idforge":    true,
		"postgres://postgres@127.0.0.1/idforge":  true,
		"redis+mysql://127.0.0.1:6379/0?sql=...": true,
	} {
		if got := sharedStore(url); got != want {
			t.Errorf("sharedStore(%q) = %v, want %v", url, got, want)
		}
	}
}

// Settings Open cannot use are refused with the sentinel of what is
// wrong, and leave nothing open: the data directory opens again at once.
func TestOpenRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want error
		says string
	}{
		{"no data directory", func(s *Settings) { s.DataDir = "" }, idforge.ErrInvalidArgument, "no data directory"},
		{"bad layout", func(s *Settings) { s.Layout = "bogus" }, idforge.ErrInvalidLayout, "bogus"},
		{"worker out of range", func(s *Settings) { s.Worker = "99999" }, idforge.ErrInvalidWorker, "99999"},
		{"format key not set", func(s *Settings) {
			s.Keys = []Key{{Key: idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}, Format: "feistel:bits=40+base62", FormatKey: "env:NOT_SET"}}
		}, idforge.ErrInvalidArgument, `environment variable NOT_SET is not set (key "k": format_key)`},
		{"unknown plugin", func(s *Settings) { s.Plugins = []plugin.Config{{Kind: "quota"}} }, idforge.ErrInvalidArgument, `unknown plugin kind "quota"`},
		{"rate twice", func(s *Settings) { s.Plugins = []plugin.Config{{Kind: "rate"}, {Kind: "rate"}} }, idforge.ErrInvalidArgument, "plugin rate"},
		{"drift without a budget", func(s *Settings) { s.Drift = true }, idforge.ErrInvalidArgument, "Drift needs MaxBorrow"},
		{"bad serial", func(s *Settings) { s.Serials = []idforge.Serial{{Name: "s", Template: "@{nosuch}"}} }, idforge.ErrInvalidArgument, `config serial "s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{DataDir: dir, Logger: quiet, Getenv: func(string) string { return "" }}
			tc.edit(&s)
			n, err := Open(context.Background(), s)
			if err == nil {
				n.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Open: %v; want %v saying %q", err, tc.want, tc.says)
			}
			n, err = Open(context.Background(), Settings{DataDir: dir, Logger: quiet})
			if err != nil {
				t.Fatalf("the data directory after a failed Open: %v", err)
			}
			n.Close()
		})
	}
}

// One process at a time holds a data directory; Close gives it up, once.
func TestCloseUnlocks(t *testing.T) {
	s := Settings{DataDir: t.TempDir(), Logger: quiet}
	n, err := Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), s); !errors.Is(err, idforge.ErrLocked) {
		t.Fatalf("second Open on an open data directory: %v, want ErrLocked", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	again, err := Open(context.Background(), s)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if again.StoreURL() != DefaultStoreURL(s.DataDir) || again.Dir() == "" {
		t.Errorf("store %q in %q, want the default SQLite database", again.StoreURL(), again.Dir())
	}
	again.Close()
}

// A date-packed source's counter URL hides its password wherever the
// definition is shown (GET /v1/sources, sources show), as url and balance
// do; explain still reads its period, zone and bits from what is shown.
func TestRedactedDatePacked(t *testing.T) {
	spec, _ := Source{DatePacked: "redis://:hunter2-secret@db:6379/0?period=second&tz=UTC", Bits: 14}.MarshalJSON()
	d := redacted(issuer.Defined{Definition: idforge.Definition{Kind: KindSource, Name: "orders", Spec: string(spec)}})
	if strings.Contains(d.Spec, "hunter2") || !strings.Contains(d.Spec, "period=second") {
		t.Fatalf("shown as %s; want the password hidden, the rest kept", d.Spec)
	}
	if u, err := issuer.ExplainPacked(d, 250413120000<<14|1); err != nil || u.Count != 1 || u.Zone != "UTC" {
		t.Fatalf("ExplainPacked of the shown definition = %+v, %v", u, err)
	}
}

// /v1/node (WorkerSource) and the log say which
// address and bits an ip:// worker ID came from.
func TestWorkerSourceIP(t *testing.T) {
	n, err := Open(context.Background(), Settings{DataDir: t.TempDir(), Logger: quiet, Worker: "ip://?addr=10.1.2.3&bits=5"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if got := n.WorkerSource(); n.Snowflake().Worker() != 3 || !strings.Contains(got, "worker ID 3: the low 5 bits of IPv4 address 10.1.2.3") {
		t.Fatalf("worker %d from %q, want 3 from the low 5 bits of 10.1.2.3", n.Snowflake().Worker(), got)
	}
}
