package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/idforge/idforge"
)

// A definition's relative SQLite file is the data directory's; nothing
// else changes; a file left in the working directory is refused rather
// than replaced by a new, empty one (issue 24, item 8).
func TestInDataDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	t.Chdir(dir)
	for raw, want := range map[string]string{
		"sqlite:counters.db?period=day&cap=99": "sqlite://" + filepath.ToSlash(filepath.Join(data, "counters.db")) + "?period=day&cap=99",
		"sqlrow+sqlite:sub/seq.db?name=o":      "sqlrow+sqlite://" + filepath.ToSlash(filepath.Join(data, "sub", "seq.db")) + "?name=o",
		"SQLITE:c.db":                          "sqlite://" + filepath.ToSlash(filepath.Join(data, "c.db")),
		"sqlite:///abs/c.db":                   "sqlite:///abs/c.db",
		"sqlite:":                              "sqlite:",
		"sqlite://host/c.db":                   "sqlite://host/c.db",
		"redis://127.0.0.1:6379/0?key=a":       "redis://127.0.0.1:6379/0?key=a",
		"mysql://u@h/db":                       "mysql://u@h/db",
	} {
		got, err := InDataDir(raw, data)
		if err != nil || got != want {
			t.Errorf("InDataDir(%q) = %q, %v; want %q", raw, got, err, want)
		}
		if got, _ := InDataDir(raw, ""); got != raw {
			t.Errorf("InDataDir(%q) without a data directory = %q", raw, got)
		}
	}
	// A file a node counted in before, in the working directory.
	if err := os.WriteFile("old.db", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InDataDir("sqlite:old.db?period=day", data); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("a file in the working directory only: %v, want ErrInvalidArgument", err)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename("old.db", filepath.Join(data, "old.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := InDataDir("sqlite:old.db?period=day", data); err != nil {
		t.Fatalf("once moved: %v", err)
	}
}
