package main

import (
	"context"
	"fmt"
	"io"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/store"
)

// cmdMigrate creates or upgrades the store's schema. It needs no data
// directory lock and no worker ID: it only talks to the store, so it can
// run while nodes serve.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("migrate", stderr)
	nf := newNodeFlags(fs, false)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErr("migrate takes no arguments")
	}
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	url := cfg.storeURL(cfg.Data)
	st, err := store.Open(ctx, url, store.Options{DataDir: cfg.Data, Logger: newLogger(stderr, cfg.LogLevel), ForMigrate: true})
	if err != nil {
		return fmt.Errorf("store %s: %w", dsn.RedactedString(url), err)
	}
	defer st.Close()
	m, ok := st.(idforge.Migrator)
	if !ok {
		fmt.Fprintf(stdout, "%s keeps no schema; nothing to migrate\n", dsn.RedactedString(url))
		return nil
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", dsn.RedactedString(url), err)
	}
	fmt.Fprintf(stdout, "schema of %s is up to date\n", dsn.RedactedString(url))
	return st.Close()
}
