// Package idforge holds the contracts shared by every part of the idforge ID
// issuer: the Generator interfaces that strategies implement, the store
// interfaces that backends implement, key descriptions, the clock seam,
// the sentinel errors callers test with errors.Is, and the one error
// vocabulary (Code, codes.go) from which every transport and the client
// take their HTTP statuses, gRPC codes and retry rules.
//
// # Where each rule lives
//
// Every rule has one owner; change it there and every caller follows.
//
//   - idforge (this package): the contracts (Generator, Store, Key and its
//     limits in Key.Validate, Clock), MaxCount (the most IDs or serials one
//     request may ask for, on every transport), the sentinel errors
//     (errors.go) and the one error vocabulary (codes.go: each Code's HTTP
//     status, gRPC code and whether a retry may succeed).
//   - segment: Leaf-style number segments claimed from a store, double
//     buffered in memory, strictly increasing per node; adaptive step.
//   - snowflake: 63-bit time + datacenter + worker + sequence IDs: layouts
//     and presets, explain/make, the clock-rollback guard, the time fence.
//   - timeid: UUIDv7 and ULID. serial: the serial-number template language
//     and the proof that an accepted template never repeats a value.
//     obfuscate: keyed permutations and string forms (base62, Sqids).
//   - sequence: sources and per-period counters behind one small interface
//     (redis, memcache, mongo, sqlrow, autoinc, tickets); sequence/compose: the
//     bitwise load balancing and memory expansion over any of them.
//   - worker: worker-ID providers and leases (static, file, k8s; etcd,
//     zookeeper, redis, sql), the renewal with fencing, the local cache and
//     Supervise, which keeps a generator on a live lease across losses;
//     worker/internal/holder what the coordinated providers keep of this
//     node (owner, logger, clock, cache) and the Redis and SQL lease flow,
//     with its settings' defaults and checks; worker/internal/coord their
//     URLs (hosts, dial_timeout) and times.
//   - store: the backend registry; store/internal/sqlstore the one SQL
//     store that store/mysql, store/postgres and store/sqlite are backends
//     of; store/internal/claim what every database-backed
//     store shares around a claim (retries and their backoff, the errors
//     that answer about a key, open/closed state, per-call timeout, the
//     hand-back of a range); store/mongo (MongoDB, single-document atomic updates);
//     store/redis (Redis in front of one of them); store/memstore for
//     tests; store/storetest the conformance suite every backend runs.
//   - issuer: routes a key to its strategy, applies formats and plugins;
//     plugin: interceptors around every issue and the registry of kinds.
//   - node: assembles a whole node (data directory, store, worker lease,
//     generator, sources, plugins, issuer, metrics) from plain Settings, for
//     the binary and for Go programs that embed idforge. datadir: the
//     node's locked directory and time fence. metrics: Prometheus.
//   - server/httpapi, server/grpcapi, server/compat (Leaf, Tinyid, Vesta
//     endpoints), server/ui (the admin page); auth: tokens and rights;
//     client: the Go client with local caching and fail-over.
//   - api: the API descriptions, the gRPC service's protocol buffers and
//     openapi.json (OpenAPI 3.1 of the whole HTTP API, served at
//     /openapi.json; its error codes generated from codes.go);
//     internal/httpmux: the router that lets tests walk the real routes.
//   - internal/registry: the one scheme registry behind store, worker and
//     sequence; internal/dsn: URL parsing, typed query parameters and
//     password redaction;
//     internal/redisconn: the go-redis client of a Redis URL (single,
//     Sentinel, Cluster) and the WAIT for replicas before values are
//     handed out; internal/mongoconn: the MongoDB client of a URL, its
//     majority concerns and which errors are transient; internal/sqldb: SQL's one owner (the pool of a URL and
//     its defaults, each engine's dialect and error meanings, the
//     failover fence idforge_fence that keeps claims off a promoted
//     replica until `idforge keys repair`), with one sub-package per
//     engine, the only importer of its driver; internal/fingerprint: the guard against
//     changes that could repeat values (layout, balanced members, expansion
//     bits, key formats, obfuscate plugins), fingerprints recorded at first
//     use; internal/httperr and internal/grpcerr:
//     the error answer of every transport; internal/httpwire: the JSON
//     API's answers and query parameters, as server/httpapi writes them
//     and client reads them; internal/grpcwire: the same for the gRPC
//     API's messages (the key strategies of its enum); internal/errctx: how context is added to
//     an error; internal/wait, internal/atomicmax: the context-aware sleep
//     and the forward-only high-water mark; internal/cacheline: the
//     padding that keeps a hot counter on a cache line of its own;
//     internal/closeonce: the
//     idempotent Close, and the client an opener makes from a URL
//     (closed by what was built on it, or at once when that fails);
//     internal/testclock: the clock an end-to-end test moves in the
//     binary's test builds.
//   - verify: the cluster checker in the spirit of Jepsen's unique-ids
//     workload (no value twice, segment IDs increasing per client, distinct
//     snowflake workers, serials of their template) and its compact sets
//     of seen values; `idforge verify` is its command line.
//   - cmd/idforge: flags, the config file and the commands, wired onto node.
//
// Backends register themselves by URL scheme; only the idforge binary
// relies on the registries. A Go program that embeds idforge builds the
// backend it wants and passes it in, or calls node.Open.
//
// The guarantees every part keeps: within a key no value is ever issued
// twice (gaps are allowed); segment keys strictly increase per node;
// snowflake IDs are k-sorted by time; when an ID cannot be issued the caller
// gets a specific error, never a guess.
package idforge
