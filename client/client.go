package client

import (
	"context"
	"iter"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
)

// Client issues IDs for named keys, whichever way idforge is deployed.
// Implementations are safe for concurrent use.
type Client interface {
	// Next returns one ID for key. Errors wrap the idforge sentinels:
	// idforge.ErrUnknownKey, idforge.ErrInvalidKey,
	// idforge.ErrUnavailable, …
	Next(ctx context.Context, key string) (int64, error)
	// NextN returns n IDs for key (n ≥ 1): strictly increasing for a
	// segment key, k-sorted for a snowflake key; fewer (at least one) when
	// a segment key runs out of space within the batch, of int64 or of
	// what its format and plugins take, and an error wrapping
	// idforge.ErrSpaceExhausted once none is left. n < 1 is an error
	// wrapping idforge.ErrInvalidCount; a remote server refuses n above
	// its maximum (idforge.MaxCount by default) the same way: a remote
	// client passes larger counts on and lets the server refuse them.
	NextN(ctx context.Context, key string, n int) ([]int64, error)
	// NextStrings returns n IDs of key as text (n ≥ 1): UUIDs or ULIDs
	// for a uuidv7, ulid or uuidv4 key, which issues no integers; the key's
	// configured text format (decimal when it has none) for a key of
	// integer IDs. Counts are checked as NextN's, and fewer come back
	// when NextN's would. WithRangeCache does not cache them.
	NextStrings(ctx context.Context, key string, n int) ([]string, error)
	// NextSerial returns n serial numbers (n ≥ 1, at most idforge.MaxCount; fewer
	// when the template's width= runs out within the batch) of the serial
	// definition name, a template the server's configuration
	// (or POST /v1/serials) defines; params fill its @{param:NAME} fields.
	// An unknown serial is an error wrapping idforge.ErrUnknownKey, a
	// missing or malformed parameter one wrapping
	// idforge.ErrInvalidArgument, a bad count one wrapping
	// idforge.ErrInvalidCount. WithRangeCache does not cache them.
	NextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error)
	// Reserve reserves the next number of a gapless serial (with
	// reuse_expired, the lowest expired reservation's) until its expiry;
	// Commit records that the reservation's number is used, Void that it
	// never will be, with a reason; Audit lists the numbers from..to (at
	// most idforge.MaxAudit; to 0: as many) and the last handed out.
	// Errors wrap idforge.ErrUnknownReservation,
	// idforge.ErrAlreadyCommitted, idforge.ErrReservationExpired or
	// idforge.ErrReservationVoided as their names say, and
	// idforge.ErrWrongStrategy for a serial that is not gapless.
	Reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error)
	Commit(ctx context.Context, name, id string) (idforge.Reservation, error)
	Void(ctx context.Context, name, id, reason string) (idforge.Reservation, error)
	Audit(ctx context.Context, name string, from, to int64) ([]idforge.Reservation, int64, error)
	// Explain decodes a snowflake ID with the layout of the (first
	// answering) node; a negative ID or one the layout cannot have made
	// is an error wrapping idforge.ErrInvalidArgument.
	Explain(ctx context.Context, id int64) (Explanation, error)
	// ExplainPacked decodes id, a number of the server's date-packed
	// source named source, into the period it was counted in and its
	// count. An unknown source is an error wrapping
	// idforge.ErrUnknownKey; a source that is not date-packed, or a
	// number that is not one of its, one wrapping
	// idforge.ErrInvalidArgument.
	ExplainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error)
	// Stream issues key's IDs in batches of batch IDs (batch ≥ 1, at
	// most the server's maximum) for as long as the caller ranges over
	// it: the bulk form, for a consumer that wants millions of IDs.
	//
	//	for ids, err := range c.Stream(ctx, "order", 10_000) {
	//		if err != nil {
	//			return err // the stream ended; call Stream again to go on
	//		}
	//		use(ids) // the caller's to keep
	//	}
	//
	// Over gRPC it is calls of the IDForge Stream method in the ranges
	// form, 256 batches each; over HTTP one GET /v1/ids/{key}?form=ranges
	// per batch; embedded, one NextN per batch. Each batch holds 1 to
	// batch IDs (fewer as NextN's). A node that fails mid-stream is set
	// aside and the stream goes on on the next, as a call fails over; an
	// error another node would answer the same way, or ctx ending, ends
	// it with one last iteration carrying the error. IDs issued but never
	// received are a gap. Breaking out of the loop ends the stream;
	// WithRangeCache does not change it.
	Stream(ctx context.Context, key string, batch int) iter.Seq2[[]int64, error]
	// Key returns a generator of key's IDs over this client.
	Key(key string) idforge.BatchGenerator
	// Close releases the client's connections and drops IDs it has
	// cached (gaps). Calls after Close fail with idforge.ErrClosed. An
	// embedded client does not close its issuer. Close is idempotent.
	Close() error
}

// Explanation is a snowflake ID decoded into its fields (Vesta's expId).
type Explanation struct {
	// ID is the decoded ID.
	ID int64
	// Parts are its fields: Time (UTC, the start of its tick), Ticks,
	// Datacenter, Worker, Sequence and Fixed.
	snowflake.Parts
	// Layout is the layout's spec, e.g.
	// "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=…".
	Layout string
	// Expires is when the layout's time bits run out.
	Expires time.Time
}

// keyGen is Client.Key's adapter.
type keyGen struct {
	c   Client
	key string
}

var _ idforge.BatchGenerator = keyGen{}

func (g keyGen) Next(ctx context.Context) (int64, error) { return g.c.Next(ctx, g.key) }

func (g keyGen) NextN(ctx context.Context, n int) ([]int64, error) {
	return g.c.NextN(ctx, g.key, n)
}

// explanation builds the Explanation of id from a layout.
func explanation(l snowflake.Layout, id int64) (Explanation, error) {
	p, err := l.Explain(id)
	if err != nil {
		return Explanation{}, err
	}
	return Explanation{ID: id, Parts: p, Layout: l.String(), Expires: l.Expires()}, nil
}
