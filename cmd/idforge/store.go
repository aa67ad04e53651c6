package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/store"
)

// openStore opens the store at storeURL. Its errors name the backend and
// the database already; one for a database that does not exist also
// says how to create it (internal/sqldb).
func openStore(ctx context.Context, storeURL string, opts store.Options) (idforge.Store, error) {
	st, err := store.Open(ctx, storeURL, opts)
	if errors.As(err, new(*sqldb.NoDatabaseError)) {
		return nil, fmt.Errorf("%w\nthen run `idforge migrate` to create idforge's tables", err)
	} else if err != nil {
		return nil, err
	}
	return st, nil
}

// catalog is what a command that reads or defines keys opens: the store
// and an issuer over it with no generator. It opens no worker-ID source
// and issues nothing; it locks the data directory only when the store
// lives there (the default SQLite database), which one process owns.
type catalog struct {
	issuer  *issuer.Issuer
	closers []io.Closer // the data directory, the store, the issuer: closed last to first
}

// openCatalog opens the configured store for reading and defining keys.
func openCatalog(ctx context.Context, cfg Config, stderr io.Writer) (*catalog, error) {
	c := &catalog{}
	dataDir := cfg.Data
	if cfg.Store == "" {
		dir, err := datadir.Open(cfg.Data)
		if err != nil {
			return nil, err
		}
		c.closers, dataDir = append(c.closers, dir), dir.Path()
	}
	log := newLogger(stderr, cfg.LogLevel)
	st, err := openStore(ctx, cfg.storeURL(dataDir), store.Options{DataDir: dataDir, Logger: log})
	if err != nil {
		c.Close()
		return nil, err
	}
	c.closers = append(c.closers, st)
	// Configured sources are keys too (strategy source): listed by name,
	// never opened here.
	sources := make(map[string]idforge.Generator, len(cfg.Sources))
	for _, sc := range cfg.Sources {
		sources[sc.Name] = unopenedSource(sc.Name)
	}
	// Sources and counters defined through the API are defined, listed
	// and retired here too (idforge sources|counters), never served.
	srcs, ctrs := cfg.sequences()
	defs := node.Catalog(st, node.Settings{DataDir: dataDir, Sources: srcs, Counters: ctrs, Logger: log})
	c.closers = append(c.closers, defs)
	c.issuer = issuer.New(st, nil, issuer.Settings{Logger: log, Sources: sources, Definitions: defs})
	c.closers = append(c.closers, c.issuer)
	return c, nil
}

// Close closes the issuer, the store and the data directory.
func (c *catalog) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i].Close())
	}
	return errors.Join(errs...)
}

// withCatalog opens the catalog, runs fn on it and closes it.
func withCatalog(ctx context.Context, nf *nodeFlags, getenv func(string) string, stderr io.Writer, fn func(*catalog) error) error {
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	return withOpen(func() (*catalog, error) { return openCatalog(ctx, cfg, stderr) }, fn)
}

// unopenedSource stands for a configured sequence source in a command
// that lists keys: it has a name and is never drawn from.
type unopenedSource string

func (s unopenedSource) Next(context.Context) (int64, error) {
	return 0, fmt.Errorf("%w: source %q is not opened by this command", idforge.ErrUnavailable, string(s))
}
