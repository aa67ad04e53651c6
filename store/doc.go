// Package store is the registry of storage backends used by the idforge
// binary: each backend package registers a URL scheme in its init function,
// and the binary opens whatever the operator configured with Open, e.g.
//
//	st, err := store.Open(ctx, "sqlite:///var/lib/idforge/idforge.db", store.Options{DataDir: dir})
//
// The backends themselves live in sub-packages, one per technology
// (store/sqlite, …); store/all blank-imports every one of them so that a
// binary registers the full set with a single import. store/memstore is an
// in-memory double for tests, and store/storetest is the conformance and
// benchmark suite every backend runs.
//
// Only the binary should rely on this registry. A Go program that embeds
// idforge constructs the backend it wants directly (for example
// sqlite.Open) and passes the idforge.Store it gets to the strategy.
package store
