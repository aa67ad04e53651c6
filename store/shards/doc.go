// Package shards is Didi Tinyid's independent databases for segment keys:
// one key kept in N databases that do not replicate to each other, each
// issuing its own ranges, so that the key keeps issuing while any of them
// is down, without fail-over.
//
// A segment key of step S lives in every database of the set. Database i
// (from 0) holds the row (max_id = first + i·S, step = S·N): each claim
// there advances it by S·N and the store hands out the first S values,
// [max_id, max_id+S). So database i hands out exactly the blocks of S
// values whose index, counted from the key's first value, is ≡ i (mod N),
// and no two databases' blocks overlap whatever order they are claimed in.
// A claim ignores the step asked for: it is always one block. Claims go
// round robin over the databases; one that fails is left aside for the
// rescue time and the next answers. A store never hands a node a block
// below one it handed out before: a database that fell behind (it was
// down while the others issued) skips ahead in one claim of a multiple of
// S·N, keeping its residue.
//
// Each database records the set it belongs to, written by Migrate (`idforge
// migrate`): the number of databases N, its position i and the set's
// identifier, as the definition shards/set. Open and Migrate refuse a URL
// that lists the databases in another order, mixes two sets, or lists
// more or fewer than N: changing N would break the residues. A set starts
// from empty databases. Keys are created in every database (all must
// answer); a key's MaxID is the lowest max_id among the databases that
// answer, its Step the block S. Serial and operator definitions are
// written to every database (all must answer) and read from any. Step
// is fixed at creation: the store implements no idforge.KeyUpdater and
// no idforge.SegmentReturner (a block handed back would break its
// residue).
//
// Importing the package registers shards+mysql, shards+postgres and
// shards+sqlite with store.Open:
//
//	shards+mysql://user:password@host1:3306/db?also=host2:3306/db
//
//	also    more databases, host:port/database (a path for SQLite), with
//	        the same user, password and parameters; the URL's own first
//	rescue  how long a failing database is left aside (default 5s)
//
// Other parameters are the inner store's. Open fails when no database
// answers and configured; a database down at Open is opened when it first
// answers. Status reports each database (sequence.StatusReporter), so
// readiness, /v1/node, metrics and `idforge doctor` show which is down;
// Ping succeeds while one answers.
package shards
