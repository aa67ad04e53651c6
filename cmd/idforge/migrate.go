package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/worker"
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

// cmdMigrate creates or upgrades the store's schema, and the table of a
// worker-ID provider on a database server (--worker mysql://…), which
// serve never creates. It needs no data directory lock and no worker ID:
// it only talks to the databases, so it can run while nodes serve.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("migrate", stderr)
	nf := newStoreFlags(fs)
	fs.StringVar(&nf.worker, "worker", "", workerHelp()+"; migrate creates the idforge_workers table of a mysql:// or postgres:// one")
	if _, err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	err := withAdminStore(ctx, nf, getenv, stderr, func(st idforge.Store, url string) error {
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
	if err != nil {
		return err
	}
	return migrateWorker(ctx, nf, getenv, stdout, stderr)
}

// migrateWorker creates the table of the configured worker-ID provider
// when it keeps one on a database server (worker/sql: Provider.Migrate);
// any other provider has nothing to migrate.
func migrateWorker(ctx context.Context, nf *nodeFlags, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	scheme, _, _ := strings.Cut(strings.ToLower(cfg.Snowflake.Worker), "://")
	scheme = strings.TrimPrefix(scheme, "ip+")
	if scheme != "mysql" && scheme != "postgres" && scheme != "postgresql" {
		return nil
	}
	p, err := worker.Open(ctx, cfg.Snowflake.Worker, worker.Options{DataDir: cfg.Data, Logger: newLogger(stderr, cfg.LogLevel)})
	if err != nil {
		return exitErr(err)
	}
	if c, ok := p.(io.Closer); ok {
		defer c.Close()
	}
	m, ok := p.(interface {
		Migrate(context.Context) ([]string, error)
	})
	if !ok {
		return nil
	}
	name := dsn.RedactedString(cfg.Snowflake.Worker)
	created, err := m.Migrate(ctx)
	if err != nil {
		return inContext(err, "migrate the worker IDs' table at %s", name)
	}
	if len(created) == 0 {
		fmt.Fprintf(stdout, "worker IDs at %s: every table was there; nothing changed\n", name)
	} else {
		fmt.Fprintf(stdout, "created %s for worker IDs in %s\n", strings.Join(created, ", "), name)
	}
	return nil
}
