// Package idforge holds the contracts shared by every part of the idforge ID
// issuer: the Generator interfaces strategies implement, the Store
// interfaces backends implement, Key and its limits (Key.Validate,
// MaxCount), the Clock seam, the sentinel errors callers test with
// errors.Is (errors.go), and the one error vocabulary (Code, codes.go)
// from which every transport and the client take their HTTP statuses,
// gRPC codes and retry rules.
//
// Within a key no value is ever issued twice (gaps are allowed); segment
// IDs strictly increase per node; snowflake IDs are k-sorted by time; when
// an ID cannot be issued the caller gets a specific error, never a guess.
//
// # Where each rule lives
//
// Every rule has one owner; change it there and every caller follows.
//
//   - Strategies: segment (Leaf-style segments, double buffered, adaptive
//     step, global order), snowflake (layouts, the clock-rollback guard,
//     the time fence), timeid (UUIDv7, ULID, UUIDv4), serial (the template
//     language and its uniqueness proof), obfuscate (keyed permutations
//     and text forms).
//   - Stores: store (the registry); store/internal/sqlstore, the one SQL
//     store behind store/mysql, store/postgres and store/sqlite;
//     store/internal/claim, what every database store does around a claim;
//     store/mongo; store/redis (Redis in front of another store);
//     store/shards (Tinyid's independent databases, over the SQL
//     stores); store/memstore and store/storetest for tests.
//   - sequence: sources and per-period counters (sequence/redis, memcache,
//     mongo, sqlrow, autoinc, tickets); sequence/compose, bitwise load
//     balancing and memory expansion over any of them.
//   - worker: worker-ID providers and leases, renewal with fencing, the
//     local cache and Supervise (worker/etcd, zookeeper, redis, sql;
//     worker/internal/holder and coord, what they share).
//   - One owner per technology: internal/sqldb (SQL: pools, dialects,
//     error classification, the fail-over fence idforge_fence; one
//     sub-package per engine, the only importer of its driver),
//     internal/redisconn (Redis URLs, topologies and WAIT),
//     internal/mongoconn (MongoDB URLs, majority concerns, transient
//     errors), internal/dsn (URL parameters and password redaction).
//   - issuer routes a key to its strategy and applies formats, plugins
//     (plugin) and quotas (quota); internal/fingerprint refuses changes
//     that could repeat values; node assembles a whole node (datadir,
//     store, worker lease, generator, sources, issuer, metrics) from plain
//     Settings, for the binary and for programs that embed idforge.
//   - Transports: server/httpapi (with Leaf's endpoints), server/grpcapi,
//     server/compat (Tinyid, Vesta), server/ui; internal/httperr, the
//     error answer over HTTP; auth (tokens, rights, TLS); api (the
//     protocol buffers and openapi.json); client (the Go client).
//   - verify (the cluster checker) and doctor (what will hurt later),
//     the commands `idforge verify` and `idforge doctor`; cmd/idforge,
//     flags, the config file and the commands, wired onto node.
//
// The other internal packages are small helpers named for what they do.
// Backends register themselves by URL scheme with internal/registry, and
// only the binary relies on the registries: a Go program builds the
// backend it wants and passes it in, or calls node.Open.
package idforge
