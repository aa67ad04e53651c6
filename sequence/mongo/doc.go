// Package mongo keeps sequences and per-period counters in MongoDB
// documents, through the official Go driver: the MongoDB counterpart of
// sequence/redis (INCR) and sequence/sqlrow (current_value + 1).
//
// # Source
//
// A Source issues the values of one document of a collection
// (default idforge_sequence):
//
//	{_id: "orders", current_value: NumberLong(41)}
//
// Each value is one findOneAndUpdate: {$inc: {current_value: 1}} on the
// document, filtered on a current_value below the largest int64, returning
// the document as updated. MongoDB applies it to the document atomically,
// so any number of sources in any number of processes never see one value
// twice. Importing the package registers sequence.Open's schemes
// "mongodb" and "mongodb+srv":
//
//	mongodb://user:password@h1,h2,h3/idforge?replicaSet=rs0&name=orders
//
//	name        the document's _id, required (idforge.ValidateKeyName)
//	collection  the collection (default idforge_sequence)
//	start       the first value of a document created here (default 1)
//	create      create the document when missing (default true)
//
// with the store's connection parameters besides (timeout,
// allow_weak_writes, allow_weak_reads, allow_ferretdb and the driver's;
// see store/mongo). Writes use w=majority and reads the majority read
// concern unless the URL weakens them and says so: an increment a
// fail-over could lose would be issued again.
//
// A document that was deleted, or holds less than the source saw (a
// restore from an old backup, a fail-over with weakened concerns), fails
// with sequence.ErrCounterLost instead of being re-created low; a
// current_value that is not an integer with idforge.ErrInvalidArgument;
// past the largest int64, idforge.ErrSpaceExhausted; the server's
// failures with idforge.ErrUnavailable.
//
// # Counter store
//
// A CounterStore keeps per-period counters (see sequence.Counter) in a
// collection (default idforge_counter), one document per counter name:
//
//	{_id: "waybill", period: NumberLong(20250413), n: NumberLong(17)}
//
// the period it counts in (its stamp, see sequence.Period.Stamp) and the
// count, which is also the counter's mark. A number is one
// findOneAndUpdate: $inc of n on the document still in the period and
// below the cap, or, when the period has moved on, a $set to the new
// period with count 1 on the document still in the period it was read in
// (a compare-and-set, tried again if another node moved it first).
// Importing the package registers sequence.OpenCounter's schemes
// "mongodb" and "mongodb+srv":
//
//	mongodb://h1,h2,h3/idforge?replicaSet=rs0&name=waybill&period=day&cap=99999
//
// with collection and the connection parameters above besides
// OpenCounter's own. Neither needs a multi-document transaction.
package mongo
