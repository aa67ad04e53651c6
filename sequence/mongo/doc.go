// Package mongo keeps sequences and per-period counters in MongoDB
// documents, through internal/mongoconn: the MongoDB counterpart of
// sequence/redis and sequence/sqlrow. Neither needs a multi-document
// transaction.
//
// A Source issues the values of one document, {_id: "orders",
// current_value: NumberLong(41)}: each value is one findOneAndUpdate that
// $inc's current_value below the largest int64 and returns the document
// as updated, atomic on its own. A CounterStore keeps per-period counters
// (see sequence.Counter), one document per name, {_id: "waybill", period:
// NumberLong(20250413), n: NumberLong(17)}, whose count is also the mark:
// a number is one findOneAndUpdate that $inc's n within the period and
// below the cap, or moves the document to a new period with count 1 by a
// compare-and-set on the period it was read in.
//
// Importing the package registers "mongodb" and "mongodb+srv" with
// sequence.Open and sequence.OpenCounter:
//
//	mongodb://user:password@h1,h2,h3/idforge?replicaSet=rs0&name=orders
//	mongodb://h1,h2,h3/idforge?replicaSet=rs0&name=waybill&period=day&cap=99999
//
//	name        a source's document _id, required (idforge.ValidateKeyName)
//	collection  the collection (default idforge_sequence, idforge_counter)
//	start       the first value of a document a source creates (default 1)
//	create      create a source's document when missing (default true)
//
// with timeout, allow_weak_writes, allow_weak_reads, allow_ferretdb and
// the driver's parameters, as for store/mongo, and OpenCounter's own for
// a counter. Writes use w=majority and reads the majority read concern
// unless the URL weakens them and says so: an increment a fail-over could
// lose would be issued again.
//
// A document that was deleted, or holds less than the source saw, fails
// with sequence.ErrCounterLost rather than being re-created low; a
// current_value that is not an integer with idforge.ErrInvalidArgument;
// past the largest int64, idforge.ErrSpaceExhausted; the server's failures
// with idforge.ErrUnavailable.
package mongo
