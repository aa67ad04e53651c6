// Command ferretdb is the MongoDB-compatible server idforge's tests of the
// mongodb store and sequence source run against: FerretDB, a MongoDB
// wire-protocol server written in Go, embedded with its SQLite handler,
// so that no MongoDB binary (which Debian does not package) is needed.
// It lives in a module of its own to keep FerretDB's dependencies out of
// idforge's go.mod. .ci/run builds and starts it when nothing answers on
// 127.0.0.1:27017; on a development machine:
//
//	cd tools/ferretdb && go run . -listen 127.0.0.1:27017 -dir /tmp/idforge-ferretdb &
//
// It serves until it receives SIGINT or SIGTERM. It is a test fixture,
// not a way to run idforge in production: use MongoDB (a replica set)
// there.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to serve the MongoDB wire protocol on")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "idforge-ferretdb"), "directory of the SQLite databases (one file per MongoDB database)")
	level := flag.String("log", "warn", "log level: debug, info, warn or error")
	flag.Parse()
	if err := run(*listen, *dir, *level); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, dir, level string) error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("-log: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving", "uri", f.MongoDBURI(), "dir", abs)
	return f.Run(ctx)
}
