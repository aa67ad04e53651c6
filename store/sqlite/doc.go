// Package sqlite is idforge's embedded default store: one SQLite file, no
// server, no cgo (it uses the pure-Go driver modernc.org/sqlite).
//
// # Schema
//
// Segment keys live in leaf_alloc, the table of Meituan's Leaf, column for
// column, so a Leaf database can be used in place and a later MySQL or
// PostgreSQL backend shares one schema:
//
//	leaf_alloc(biz_tag varchar(128) primary key, max_id bigint NOT NULL DEFAULT 1,
//	           step int NOT NULL, description varchar(256) NULL,
//	           update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)
//
// A row added to leaf_alloc by hand is a segment key like any other. Keys of
// other strategies (snowflake) live in idforge_keys(biz_tag, strategy,
// description, update_time). A name is unique across both tables. Serial
// definitions (idforge.SerialStore) live in idforge_serials(name,
// template, time_zone, description, update_time), a namespace of their
// own; operators' definitions (idforge.DefinitionStore: sources,
// counters, …) in idforge_definitions(kind, name, spec, description,
// retired, update_time). The tables are created when absent, by Open (an embedded store
// needs no administrator) and, idempotently, by Migrate; existing tables
// are used as they are, so a file written by an older idforge gains
// idforge_serials and idforge_definitions when it is next opened.
//
// # Store URL
//
// Importing this package registers the "sqlite" scheme with store.Open,
// for the idforge binary:
//
//	sqlite:///abs/path/idforge.db   an absolute path
//	sqlite:relative/path.db         relative to the working directory
//	sqlite: or sqlite://            DefaultFileName in the node's data directory
//
// The only query parameter is busy_timeout, a Go duration
// ("sqlite:///var/lib/idforge/idforge.db?busy_timeout=10s"). Programs that
// embed idforge call Open directly instead.
//
// # Durability
//
// A claimed segment must survive a crash or power loss: a claim that is lost
// after IDs from it were issued means those IDs are issued again after a
// restart. The database therefore runs in WAL mode with synchronous=FULL,
// so every claim is on stable storage before ClaimSegment returns.
//
// # Concurrency
//
// A Store is safe for concurrent use, and several Stores (in one process or
// in several) may share one file: every claim is a single atomic UPDATE …
// RETURNING. Within a Store all writes go through one connection, so writers
// queue in Go (honouring their contexts) instead of contending for SQLite's
// write lock; reads use a separate pool of read-only connections, which WAL
// lets run alongside the writer. Between Stores, SQLite's file locks and a
// busy timeout (WithBusyTimeout) serialise the writers.
package sqlite
