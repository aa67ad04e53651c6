// Command idforge is the idforge ID issuer: `idforge serve` runs a node
// (an HTTP server, gRPC when asked), and the other commands issue,
// explain and administer IDs against a data directory or a store.
// `idforge help` lists them; docs/configuration.md documents every
// command, flag and setting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
)

// version, commit and date describe the build. scripts/release.sh stamps
// them with -ldflags "-X main.version=0.1.0 -X main.commit=… -X
// main.date=…" (the date is the commit's, so that a release builds the
// same twice); a plain go build or go run takes what the build info has.
var version, commit, date string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usage = `idforge: a distributed ID and serial-number issuer.

Usage:
  idforge serve [flags]                  run the HTTP server
  idforge next KEY [-n N] [flags]        issue N IDs for KEY (no server needed)
  idforge explain ID [--layout L]        decode a snowflake ID (--source S: a date-packed number)
  idforge make --time T [--worker N] [--datacenter N] [--sequence N] [--layout L]
                                         forge a snowflake ID from its fields
  idforge keys create KEY [flags]        create a key
  idforge keys list [flags]              list keys
  idforge keys update KEY [--step N] [--description D] [--min-step N] [--max-step N]
                                         change a key (never its max_id)
  idforge keys retire KEY                retire a key: it issues nothing, its name is never reused
  idforge keys repair --floor N|--from-nodes URL,… [--sequence URL]
                                         after a database fail-over: raise the keys, accept the new server
  idforge sources list|show|create|retire [NAME] [flags]
  idforge counters list|show|create|retire [NAME] [flags]
                                         sequence sources and per-period counters kept in the store,
                                         served by every node sharing it (as /v1/sources, /v1/counters)
  idforge layouts                        list snowflake layout presets
  idforge migrate [--store URL]          create or upgrade the store's schema
  idforge serial NAME [-n N] [--param K=V]   issue serial numbers
  idforge serial check TEMPLATE          explain a serial template
  idforge serial reserve|commit|void|audit NAME …   a gapless serial's steps and audit
  idforge quotas list|show|define|retire [NAME] --node ADDR [flags]
                                         a server's quotas: N IDs per period, closed keys, allowed formats
  idforge tickets status|expand URL…     Flickr-style ticket servers: show, or grow the set (--to N)
  idforge verify URL… --segment KEY|--snowflake KEY|--serial NAME [flags]
                                         drive the nodes and check every answer: no value twice,
                                         segment IDs increasing, worker IDs distinct, serials well formed
  idforge doctor [--node URL…] [flags]   check the configuration, the store and the nodes for
                                         what will hurt later (ok/warn/fail, each with the fix)
  idforge config check FILE [flags]      check a config file as serve would, opening nothing
  idforge version                        print the version

Run 'idforge COMMAND -h' for a command's flags. Every flag also reads an
IDFORGE_* environment variable (e.g. --data ↔ IDFORGE_DATA).
`

// A command runs one subcommand on the arguments after its name.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error

// commands are the subcommands, by name.
var commands = map[string]command{
	"serve": cmdServe, "next": cmdNext, "explain": cmdExplain, "keys": cmdKeys, "make": cmdMake,
	"layouts": cmdLayouts, "serial": cmdSerial, "tickets": cmdTickets, "migrate": cmdMigrate,
	"verify": cmdVerify, "doctor": cmdDoctor, "sources": cmdSources, "counters": cmdCounters, "quotas": cmdQuotas,
	"config": cmdConfig,
}

// run executes one command line and returns the exit status: 0 success,
// 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, c := args[0], commands[args[0]]; {
	case c != nil:
		err = c(ctx, args[1:], stdout, stderr, getenv)
	case cmd == "version":
		fmt.Fprintln(stdout, "idforge", versionLine())
	case cmd == "help" || cmd == "-h" || cmd == "-help" || cmd == "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = usageErr("unknown command %q (run 'idforge help')", cmd)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, errorLine(err))
		return 2
	default:
		fmt.Fprintln(stderr, errorLine(err))
		return 1
	}
}

// prefix begins every message idforge prints about a failure, once.
// idforge's own errors (its sentinels, and everything wrapping them)
// already begin with it.
const prefix = errctx.Prefix

// errorLine is the line the command prints for err: the error as it is,
// given the prefix when it has none of its own.
func errorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, prefix) {
		return msg
	}
	return prefix + msg
}

// inContext adds where err happened to it: after an error of idforge's
// own, before any other (see errctx.In).
var inContext = errctx.In

// versionString returns the version: the stamped one, else the module's
// from the build info (go install …@v0.1.0), else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what idforge version prints after "idforge": the
// version, the commit and the build date, each stamped or, in a plain go
// build, from the build info's VCS stamp ("unknown" without one, as in go
// run or -buildvcs=false).
func versionLine() string {
	rev, at, modified := commit, date, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.time" && at == "":
				at = s.Value
			case s.Key == "vcs.modified":
				modified = s.Value == "true" && commit == ""
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	if modified {
		rev += "+dirty"
	}
	if at == "" {
		at = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, built %s)", versionString(), rev, at)
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("idforge "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("next order -n 5"), and returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseArgs parses args as parseFlags does and wants n positional
// arguments, which what describes for the usage error ("next takes one
// KEY, got 2 arguments").
func parseArgs(fs *flag.FlagSet, args []string, n int, what string) ([]string, error) {
	pos, err := parseFlags(fs, args)
	if err != nil || len(pos) == n {
		return pos, err
	}
	name := strings.TrimPrefix(fs.Name(), "idforge ")
	if n == 0 {
		return nil, usageErr("%s takes %s, got %q", name, what, pos)
	}
	return nil, usageErr("%s takes %s, got %d arguments", name, what, len(pos))
}

// withOpen opens a node or a catalog with open, runs fn on it and closes
// it; a failure to close (a node's final time fence not written) is an
// error too.
func withOpen[T io.Closer](open func() (T, error), fn func(T) error) error {
	x, err := open()
	if err != nil {
		return exitErr(err)
	}
	if err := fn(x); err != nil {
		x.Close()
		return exitErr(err)
	}
	return x.Close()
}

// newLogger returns the process logger: text to stderr at level.
func newLogger(w io.Writer, level string) *slog.Logger {
	lvl, _ := parseLevel(level)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// usageIn is inContext for an error in how idforge was invoked or
// configured (exit status 2).
func usageIn(err error, format string, args ...any) error {
	return usageError{inContext(err, format, args...)}
}

// exitErr maps errors that mean bad input or configuration to usage
// errors (status 2): a worker or datacenter ID the layout cannot hold is
// configuration too.
func exitErr(err error) error {
	for _, e := range []error{idforge.ErrInvalidKey, idforge.ErrInvalidCount, idforge.ErrInvalidArgument, idforge.ErrInvalidLayout, idforge.ErrInvalidWorker} {
		if errors.Is(err, e) {
			return usageError{err}
		}
	}
	return err
}
