package sqlite

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// TestPragmas checks the settings durability and concurrency rest on, on
// the connections the store really uses.
func TestPragmas(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), WithLogger(slog.New(slog.DiscardHandler)), WithBusyTimeout(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	tests := []struct {
		pool, pragma, want string
	}{
		{"writer", "journal_mode", "wal"},
		{"writer", "synchronous", "2"}, // FULL
		{"writer", "busy_timeout", "1500"},
		{"writer", "query_only", "0"},
		{"reader", "journal_mode", "wal"},
		{"reader", "busy_timeout", "1500"},
		{"reader", "query_only", "1"},
	}
	for _, tt := range tests {
		db := s.w
		if tt.pool == "reader" {
			db = s.r
		}
		var got string
		if err := db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
			t.Fatalf("%s: PRAGMA %s: %v", tt.pool, tt.pragma, err)
		}
		if got != tt.want {
			t.Errorf("%s: PRAGMA %s = %s, want %s", tt.pool, tt.pragma, got, tt.want)
		}
	}
	if _, err := s.r.ExecContext(ctx, "DELETE FROM leaf_alloc"); err == nil {
		t.Error("the reader pool accepted a write")
	}
}
