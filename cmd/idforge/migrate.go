package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/store"
)

// tableCreator is implemented by stores that can say which of idforge's
// tables they created (the SQL stores), so that migrate says what it did.
type tableCreator interface {
	MigrateTables(ctx context.Context) ([]string, error)
}

// withAdminStore opens the store the flags configure for an
// administrative command (migrate, keys repair): with ForMigrate, so that
// a database without idforge's tables opens, and no data directory lock.
// It runs do with the store and its URL (redact it in messages), and
// closes the store.
func withAdminStore(ctx context.Context, nf *nodeFlags, getenv func(string) string, stderr io.Writer, do func(st idforge.Store, url string) error) error {
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	url := cfg.storeURL(cfg.Data)
	st, err := openStore(ctx, url, store.Options{DataDir: cfg.Data, Logger: newLogger(stderr, cfg.LogLevel), ForMigrate: true})
	if err != nil {
		return exitErr(err)
	}
	defer st.Close()
	if err := do(st, url); err != nil {
		return err
	}
	return st.Close()
}

// cmdMigrate creates or upgrades the store's schema. It needs no data
// directory lock and no worker ID: it only talks to the store, so it can
// run while nodes serve.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("migrate", stderr)
	nf := newStoreFlags(fs)
	if _, err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	return withAdminStore(ctx, nf, getenv, stderr, func(st idforge.Store, url string) error {
		m, ok := st.(idforge.Migrator)
		if !ok {
			fmt.Fprintf(stdout, "%s keeps no schema; nothing to migrate\n", dsn.RedactedString(url))
			return nil
		}
		creator, reports := st.(tableCreator)
		if !reports {
			if err := m.Migrate(ctx); err != nil {
				return inContext(err, "migrate %s", dsn.RedactedString(url))
			}
			fmt.Fprintf(stdout, "schema of %s is up to date\n", dsn.RedactedString(url))
			return nil
		}
		created, err := creator.MigrateTables(ctx)
		if err != nil {
			return inContext(err, "migrate %s", dsn.RedactedString(url))
		}
		if len(created) == 0 {
			fmt.Fprintf(stdout, "%s is already up to date: every table idforge uses was there; nothing changed\n", dsn.RedactedString(url))
		} else {
			fmt.Fprintf(stdout, "created %s in %s\n", strings.Join(created, ", "), dsn.RedactedString(url))
		}
		return nil
	})
}
