// Package sqlite is idforge's embedded default store: one SQLite file, no
// server, no cgo (the pure-Go driver modernc.org/sqlite, through
// internal/sqldb).
//
// The tables are those of store/mysql, column for column: Meituan Leaf's
// leaf_alloc for segment keys (a row added by hand is a key),
// idforge_keys for keys of other strategies (a name is unique across
// both), idforge_serials and idforge_definitions. Open creates the
// missing ones (an embedded store has no administrator), and so does
// Migrate; existing tables are used as they are.
//
// The store URL, registered with store.Open as "sqlite":
//
//	sqlite:///abs/path/idforge.db   an absolute path
//	sqlite:relative/path.db         relative to the working directory
//	sqlite: or sqlite://            DefaultFileName in the node's data directory
//
// Its one parameter is busy_timeout, a Go duration (WithBusyTimeout).
//
// A claimed segment must survive a crash or power loss, or its IDs would
// be issued again after a restart: the file runs in WAL mode with
// synchronous=FULL, so a claim is on stable storage when ClaimSegment
// returns. A claim is one UPDATE … RETURNING. Within a Store all writes go
// through one connection, so writers queue in Go, honouring their
// contexts; reads use a pool of read-only connections beside it. Several
// Stores, in one process or several, may share a file: SQLite's file lock
// and the busy timeout serialise their writers.
package sqlite
