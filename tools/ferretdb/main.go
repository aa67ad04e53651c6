// Command ferretdb is the MongoDB wire-protocol server the tests of
// idforge's MongoDB store and sources run against (DEVELOPERS.md says how
// to start it): FerretDB embedded with its SQLite handler, in a module of
// its own to keep its dependencies out of idforge's go.mod. A test
// fixture, not a production server. FerretDB 1.x applies findAndModify
// and update as a read then a write of the whole document, so two
// concurrent $inc could read the same value; this server therefore runs
// one command at a time, for all connections together, which gives the
// tests MongoDB's single-document atomicity. It serves until SIGINT or
// SIGTERM.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
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
	front, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer front.Close()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	back, err := url.Parse(f.MongoDBURI())
	if err != nil {
		return err
	}
	go serialize(ctx, front, back.Host, logger)
	logger.Info("serving", "listen", front.Addr().String(), "ferretdb", back.Host, "dir", abs)
	return f.Run(ctx)
}

// serialize accepts connections on front and relays each to FerretDB at
// back, one command at a time across all connections.
func serialize(ctx context.Context, front net.Listener, back string, logger *slog.Logger) {
	go func() {
		<-ctx.Done()
		front.Close()
	}()
	var mu sync.Mutex
	for {
		c, err := front.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			b, err := net.Dial("tcp", back)
			if err != nil {
				logger.Error("dial FerretDB", "err", err)
				return
			}
			defer b.Close()
			for {
				req, err := readMessage(c)
				if err != nil {
					return
				}
				if err := roundTrip(&mu, b, c, req); err != nil {
					return
				}
			}
		}()
	}
}

// roundTrip sends one request to FerretDB and relays its reply, holding
// mu throughout. An OP_MSG whose moreToCome flag is set has no reply.
func roundTrip(mu *sync.Mutex, back, client net.Conn, req []byte) error {
	mu.Lock()
	defer mu.Unlock()
	if _, err := back.Write(req); err != nil {
		return err
	}
	const opMsg, moreToCome = 2013, 1 << 1
	if binary.LittleEndian.Uint32(req[12:16]) == opMsg && len(req) >= 20 && binary.LittleEndian.Uint32(req[16:20])&moreToCome != 0 {
		return nil
	}
	resp, err := readMessage(back)
	if err != nil {
		return err
	}
	_, err = client.Write(resp)
	return err
}

// readMessage reads one wire-protocol message: a little-endian int32
// length (of the whole message) and the rest.
func readMessage(r io.Reader) ([]byte, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:4]))
	if n < 16 || n > 64<<20 {
		return nil, fmt.Errorf("bad message length %d", n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[16:]); err != nil {
		return nil, err
	}
	return msg, nil
}
