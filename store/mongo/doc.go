// Package mongo is the idforge store kept in MongoDB, through the
// official Go driver (go.mongodb.org/mongo-driver/v2): the persistence
// layer of the segment issuers that keep their segments' high-water marks
// in MongoDB, on the same footing as store/mysql and store/postgres.
//
// # Store URL
//
// Importing this package registers the schemes "mongodb" and
// "mongodb+srv" with store.Open (see ParseURL):
//
//	mongodb://user:password@host1:27017,host2:27017,host3:27017/idforge?replicaSet=rs0&authSource=admin
//	mongodb+srv://user:password@cluster0.example.net/idforge
//
// The path names the database (default "idforge"). idforge's own
// parameters are taken out; every other one is the driver's:
//
//	timeout            Config.Timeout, a Go duration > 0 (default 3s)
//	retries            Config.Retries, an integer ≥ 0 (default 2)
//	allow_weak_writes  true: accept a write concern weaker than w=majority
//	allow_weak_reads   true: accept a read concern weaker than majority
//	allow_ferretdb     true: accept a FerretDB server (see Config.AllowFerretDB)
//
// # What is stored where
//
// Collection idforge_keys holds one document per key, its name as _id:
//
//	{_id: "order", strategy: "segment", max_id: NumberLong(2001), step: NumberLong(1000), description: "…", update_time: ISODate(…)}
//	{_id: "trace", strategy: "snowflake", update_time: ISODate(…)}
//
// and idforge_serials one per serial definition, its name as _id:
//
//	{_id: "order-no", template: "…", time_zone: "Asia/Shanghai", description: "…", update_time: ISODate(…)}
//
// and idforge_definitions one per operator's definition
// (idforge.DefinitionStore), "<kind>/<name>" as _id:
//
//	{_id: "source/daily", kind: "source", name: "daily", spec: "{…}", retired: false, update_time: ISODate(…)}
//
// A name is unique because it is the _id: MongoDB keeps a unique index on
// _id in every collection, and it cannot be dropped, so no index of
// idforge's can go missing. `idforge migrate` creates the two
// collections; Open refuses a database without idforge_keys and says to
// run it.
//
// # Single-document atomicity, no transactions
//
// Every write is one single-document operation: a key or serial is one
// insert (a taken name is a duplicate-key error, idforge.ErrKeyExists); a
// claim is one findOneAndUpdate whose filter matches only a segment key
// with an integer max_id that can grow by the step without passing the
// largest int64, whose update is {$inc: {max_id: step}}, and which returns
// the document as updated; the hand-back of a clean shutdown
// (idforge.SegmentReturner) is one updateOne that sets max_id back only
// where it is still the end of this node's last claim. The store needs no
// multi-document transaction, which FerretDB lacks.
//
// # Failover safety
//
// A replica set fails over asynchronously: a primary that acknowledged a
// write to itself alone may lose it when a secondary takes over, and the
// new primary would hand the same range out again. So, unless the URL
// says otherwise, writes use w=majority (acknowledged once a majority of
// the voting members has them, which an election cannot lose) and reads
// the majority read concern; claims and the reads that explain a refused
// claim go to the primary. A URL that weakens them (w=1, w=0, w=2,
// journal=false, readConcernLevel=local or available) is refused unless
// it adds allow_weak_writes=true or allow_weak_reads=true. Configure the
// replica set with journaling on (the default), writeConcernMajorityJournalDefault
// true (the default), and an odd number of voting members. As with every
// segment store, never lower max_id by hand: the segment allocator of a
// running node refuses ranges below what it holds, but a node started
// afterwards cannot know them.
//
// # FerretDB
//
// FerretDB, a MongoDB wire-protocol server written in Go, is what the
// tests run against (tools/ferretdb). FerretDB 1.x applies findAndModify
// and update as a read and then a write of the whole document, so two
// concurrent claims can read the same max_id; Open refuses it unless
// allow_ferretdb=true, which the test server may set because it runs one
// command at a time. It also has no replica sets, write concerns or
// retryable writes to speak of, and does not implement a projection on
// findAndModify, which this store therefore does not ask for.
package mongo
