package sequence

import (
	"context"
	"io"
	"net/url"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/registry"
)

// Source is a sequence source opened from a URL: a Generator whose
// resources (connections, pools) Close releases. Close is idempotent;
// Next after Close returns an error wrapping idforge.ErrClosed.
type Source interface {
	idforge.Generator
	io.Closer
}

// Opener opens one kind of source from a URL whose scheme it registered.
// u.Scheme is lower case. The opener must release whatever it set up when
// it returns an error, and its errors must not contain passwords.
type Opener func(ctx context.Context, u *url.URL) (Source, error)

// CounterOpener opens the store of a per-period counter from a URL whose
// scheme it registered. OpenCounter has already taken the counter's own
// parameters (name, period, cap, over_cap, tz, dir, ahead) out of u's
// query; name is the counter's name. If the store holds resources it
// should implement io.Closer: the Counter closes it.
type CounterOpener func(ctx context.Context, u *url.URL, name string) (CounterStore, error)

// Scheme describes a registered URL scheme for help texts: its Name, the
// URL Form to write and a short Doc.
type Scheme = registry.Scheme

const all = "github.com/idforge/idforge/sequence/all"

var (
	sources   = registry.New[Opener]("sequence source", all)
	counters  = registry.New[CounterOpener]("counter store", all)
	repairers = registry.New[Repairer]("sequence repair", all)
)

// Repair says how RepairFailover puts a database of sources or counters
// back into service after it failed over (idforge keys repair
// --sequence).
type Repair struct {
	// Floor is at or above every value the database's sources handed out.
	Floor int64
	// CounterFloor is at or above every count its per-period counters
	// made (rows of earlier periods move to it; a zero Stamp keeps each
	// row's period).
	CounterFloor Mark
	// NoAccept raises the values only: the fences keep refusing the
	// server the database reaches now.
	NoAccept bool
}

// Repairer raises the sources and counters in the database(s) u names
// as r says and, unless r.NoAccept, makes their fail-over fences accept
// the server they reach now. It returns what it did, in a sentence for
// an operator.
type Repairer func(ctx context.Context, u *url.URL, r Repair) (string, error)

// RegisterRepairer makes RepairFailover know s.Name, a scheme of a
// source or counter kept in a database that fails over. It panics like
// Register.
func RegisterRepairer(s Scheme, repair Repairer) { repairers.Register(s, repair) }

// RepairFailover repairs the database(s) rawURL names by its scheme (see
// Repairer). Its error wraps idforge.ErrInvalidArgument for a scheme
// with nothing to repair.
func RepairFailover(ctx context.Context, rawURL string, r Repair) (string, error) {
	return registry.Open(repairers, rawURL, func(u *url.URL, repair Repairer) (string, error) { return repair(ctx, u, r) })
}

// RepairSchemes returns the schemes RepairFailover knows with their URL
// forms, sorted by name, for help texts.
func RepairSchemes() []Scheme { return repairers.Schemes() }

// Register makes a source available to Open under s.Name, e.g. "redis"
// or "sqlrow+mysql". It is meant for a backend package's init function
// and panics, each case being a programming error, when the name is not
// a lower-case URL scheme, open is nil or the scheme is taken.
func Register(s Scheme, open Opener) { sources.Register(s, open) }

// RegisterCounter makes a counter store available to OpenCounter under
// s.Name. It panics like Register.
func RegisterCounter(s Scheme, open CounterOpener) { counters.Register(s, open) }

// Names returns the schemes Open knows, sorted.
func Names() []string { return sources.Names() }

// Schemes returns the schemes Open knows with their URL forms, sorted by
// name, for help texts.
func Schemes() []Scheme { return sources.Schemes() }

// CounterSchemes returns the schemes OpenCounter knows with their URL
// forms, sorted by name, for help texts.
func CounterSchemes() []Scheme { return counters.Schemes() }

// Open opens the source rawURL names by its scheme. Import
// github.com/idforge/idforge/sequence/all (or the backend packages you
// want) to register the schemes; see the package documentation for the
// list. It returns an error wrapping idforge.ErrInvalidArgument when the
// URL does not parse, its scheme is unknown (the message lists the known
// ones) or a parameter is wrong. Errors never contain the URL's password.
func Open(ctx context.Context, rawURL string) (Source, error) {
	return registry.Open(sources, rawURL, func(u *url.URL, open Opener) (Source, error) { return open(ctx, u) })
}

// OpenCounterStore opens the bare CounterStore rawURL names, for callers
// that count under names of their own (such as quotas shared by a
// cluster) rather than through one Counter: the URL's query holds only
// the store's own parameters, and name is used in errors and to prepare
// the store. Close the store when it implements io.Closer. Errors are as
// for OpenCounter.
func OpenCounterStore(ctx context.Context, rawURL, name string) (CounterStore, error) {
	return registry.Open(counters, rawURL, func(u *url.URL, open CounterOpener) (CounterStore, error) { return open(ctx, u, name) })
}
