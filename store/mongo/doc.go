// Package mongo is the idforge store kept in MongoDB, through
// internal/mongoconn and the official Go driver: the persistence layer of
// segment issuers that keep their high-water marks in MongoDB.
//
// The store URL, registered with store.Open as "mongodb" and
// "mongodb+srv" (see ParseURL):
//
//	mongodb://user:password@h1:27017,h2:27017,h3:27017/idforge?replicaSet=rs0&authSource=admin
//	mongodb+srv://user:password@cluster0.example.net/idforge
//
// The path names the database (default "idforge"). idforge's own
// parameters are timeout and retries (Config.Timeout, Config.Retries),
// allow_weak_writes, allow_weak_reads and allow_ferretdb; every other one
// is the driver's.
//
// Each key is one document of idforge_keys with its name as _id
// ({_id: "order", strategy: "segment", max_id: NumberLong(2001), step:
// NumberLong(1000), …}), each serial definition one of idforge_serials,
// each operator's definition one of idforge_definitions ("<kind>/<name>"
// as _id). MongoDB's unique index on _id keeps names unique and cannot
// go missing. Migrate (`idforge migrate`) creates the collections; Open
// refuses a database without idforge_keys, saying to run it.
//
// Every write is one single-document operation, atomic on its own, so no
// multi-document transaction is needed: a claim is one findOneAndUpdate
// with {$inc: {max_id: step}}, filtered on a segment key whose max_id can
// grow by the step without passing the largest int64; the hand-back of a
// clean stop is one updateOne that sets max_id back only where it is
// still the end of this node's claim.
//
// Fail-over: a replica-set primary may lose a write only it acknowledged,
// and the new primary would hand the same range out again. So writes use
// w=majority and reads the majority read concern unless the URL weakens
// them, which is refused without allow_weak_writes=true or
// allow_weak_reads=true; claims go to the primary. A store with a weaker
// write concern cannot keep a key in global order (GlobalOrder). FerretDB
// 1.x applies findAndModify as a read then a write, so concurrent claims
// could repeat a value: Open refuses it unless allow_ferretdb=true
// (Config.AllowFerretDB), which only a server that runs one command at a
// time, as the tests' does, may set.
package mongo
