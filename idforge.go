package idforge

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idforge/idforge/internal/chars"
)

// Generator issues unique IDs. Implementations are safe for concurrent use.
type Generator interface {
	// Next returns one ID. It blocks no longer than ctx allows.
	Next(ctx context.Context) (int64, error)
}

// BatchGenerator is a Generator that can issue several IDs in one call.
type BatchGenerator interface {
	Generator
	// NextN returns n IDs (n ≥ 1). For a segment generator they are
	// strictly increasing; for a snowflake generator they are k-sorted.
	NextN(ctx context.Context, n int) ([]int64, error)
}

// MaxCount is the most IDs or serials one request may ask for, on every
// way in: the HTTP API's count, the gRPC API's count and Stream batch,
// Tinyid's batchSize (cut to it, as Tinyid cuts to batch.size.max),
// issuer.NextSerial and `idforge serial -n`; a client's range cache
// fetches blocks of at most this many. It bounds what one request can
// cost a node and its client (10,000 IDs as JSON strings are about
// 230 kB) while keeping batches large enough that a caching client goes
// to the network rarely; it is also Tinyid's default batch.size.max, so
// Tinyid clients meet the cap they know.
const MaxCount = 10_000

// DefaultRequestTimeout bounds how long one request, on any way in (the
// HTTP API, the Leaf, Tinyid and Vesta endpoints, each gRPC call or
// Stream message), waits for the store when its server is not told
// otherwise: long enough to ride out a store's brief hiccup, short enough
// that a caller fails over to another node instead of hanging.
const DefaultRequestTimeout = 5 * time.Second

// Strategy names the way a key issues IDs. Segment, snowflake and source
// keys issue int64 IDs; uuidv7, ulid and uuidv4 keys issue strings.
type Strategy string

// The strategies a key can use.
const (
	// StrategySegment issues numbers from segments claimed in a store
	// (Leaf-segment): small, dense, strictly increasing per node.
	StrategySegment Strategy = "segment"
	// StrategySnowflake issues time-ordered 63-bit IDs composed of time,
	// worker and sequence; no store round trip at all.
	StrategySnowflake Strategy = "snowflake"
	// StrategyUUIDv7 issues RFC 9562 version 7 UUIDs: 128-bit,
	// time-ordered strings, strictly increasing per node.
	StrategyUUIDv7 Strategy = "uuidv7"
	// StrategyULID issues ULIDs: 128-bit, time-ordered, 26 characters of
	// Crockford base32, strictly increasing per node.
	StrategyULID Strategy = "ulid"
	// StrategyUUIDv4 issues RFC 9562 version 4 UUIDs: 122 random bits,
	// no time and no order. Unique with a probability, not a proof:
	// among n IDs two are equal with a chance below n²/2^123.
	StrategyUUIDv4 Strategy = "uuidv4"
	// StrategySource marks a key served by a configured sequence source
	// (Redis INCR, an SQL row, …). Such keys come from the configuration,
	// never from CreateKey.
	StrategySource Strategy = "source"
)

// ParseStrategy returns the Strategy named s, or an error wrapping
// ErrInvalidArgument.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case StrategySegment, StrategySnowflake, StrategyUUIDv7, StrategyULID, StrategyUUIDv4:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("%w: strategy %q (want segment, snowflake, uuidv7, ulid or uuidv4)", ErrInvalidArgument, s)
}

// IssuesStrings reports whether keys of s issue strings (uuidv7, ulid,
// uuidv4) rather than int64 IDs: they take no format, and plugins that
// transform integers do not see them.
func (s Strategy) IssuesStrings() bool {
	return s == StrategyUUIDv7 || s == StrategyULID || s == StrategyUUIDv4
}

// Order is what a segment key promises about the order of its IDs across
// the nodes that share its store. It is part of the key's definition, kept
// in the store so that every node agrees, set when the key is created and
// never changed: see OrderNode and OrderGlobal.
type Order string

// The orders of a segment key.
const (
	// OrderNode, the default: IDs strictly increase on each node and
	// trend upwards across nodes, each node issuing from segments it
	// buffers. No store round trip for most calls.
	OrderNode Order = "node"
	// OrderGlobal: every ID a node returns is greater than every ID any
	// node returned before the request began (linearizable order across
	// the cluster). No node buffers the key: each request, or each group
	// of requests that arrive together on one node, claims its values
	// from the store, so the key issues at the rate of the store's
	// claims and stops while the store is unavailable (package segment
	// says why this holds). Only stores whose claims are linearizable
	// take it (GlobalOrderStore).
	OrderGlobal Order = "global"
)

// ParseOrder returns the Order named s ("" is OrderNode), or an error
// wrapping ErrInvalidArgument.
func ParseOrder(s string) (Order, error) {
	switch Order(s) {
	case "", OrderNode:
		return OrderNode, nil
	case OrderGlobal:
		return OrderGlobal, nil
	}
	return "", fmt.Errorf("%w: order %q (want node or global)", ErrInvalidArgument, s)
}

// GlobalOrderStore is implemented by stores that can say whether they can
// keep a key in OrderGlobal.
type GlobalOrderStore interface {
	// GlobalOrder returns nil when ClaimSegment is linearizable across
	// every node sharing the store: a claim that begins after another
	// claim returned gets values above that claim's, and a claim that
	// returns was made durable on a server whose successor either keeps
	// it or refuses claims (ErrStoreFailedOver) until `idforge keys
	// repair` raises max_id above every value handed out. Otherwise it
	// returns an error wrapping ErrInvalidArgument that says why not.
	// A store that does not implement it cannot keep a key in
	// OrderGlobal.
	GlobalOrder(ctx context.Context) error
}

// Key describes one key (a "biz tag" in Leaf's words).
type Key struct {
	// Name identifies the key; see ValidateKeyName.
	Name string
	// Strategy is how the key issues IDs.
	Strategy Strategy
	// Step is the segment length a node claims at once when it has no
	// rate to go by; adaptive sizing never goes below it. Segment keys only.
	Step int64
	// MaxID is the stored high-water mark: the next segment starts here.
	// Every value below it may have been issued. Segment keys only.
	MaxID int64
	// Description is free text for operators.
	Description string
	// Order is a segment key's order across nodes; "" means OrderNode.
	// It is kept with the key's definition (package issuer), not in the
	// store's row: stores neither read nor write it.
	Order Order
	// Updated is when the key's row last changed, as the store reports it.
	Updated time.Time
}

// Segment is a half-open range [Start, End) of IDs claimed from a store.
// Claims never overlap: once returned, no other caller anywhere receives
// any value of the range.
type Segment struct {
	Start int64
	End   int64
	// Step is the key's configured (minimum) step as stored.
	Step int64
}

// Len returns the number of IDs in the segment.
func (s Segment) Len() int64 { return s.End - s.Start }

// SegmentStore is the persistence the segment strategy needs.
type SegmentStore interface {
	// ClaimSegment atomically advances key's stored max_id by step (by the
	// key's stored step when step is 0) and returns the range between the
	// old and the new max_id. It returns an error wrapping ErrUnknownKey
	// when the key has no row and ErrSpaceExhausted when the new max_id
	// would overflow int64.
	ClaimSegment(ctx context.Context, key string, step int64) (Segment, error)
}

// KeyStore keeps the catalogue of keys.
type KeyStore interface {
	// CreateKey adds a key. It returns an error wrapping ErrKeyExists when
	// a key of that name exists, whatever its strategy. For a segment key
	// MaxID is the first ID to issue and Step must be positive.
	CreateKey(ctx context.Context, k Key) error
	// Key returns one key, or an error wrapping ErrUnknownKey.
	Key(ctx context.Context, name string) (Key, error)
	// Keys returns every key, sorted by name.
	Keys(ctx context.Context) ([]Key, error)
}

// KeyUpdater is implemented by stores whose keys an operator can change
// (`PATCH /v1/keys/{key}`, `idforge keys update`).
type KeyUpdater interface {
	// UpdateKey sets the stored step (segment keys only; 0 for any other
	// key) and the description of the key name. It never touches max_id,
	// so no change can make a key issue a value again. It returns an
	// error wrapping ErrUnknownKey when there is no such key, and one
	// wrapping ErrInvalidArgument for a step out of [1, MaxStep] (or a
	// step for a key of another strategy) or a description Key.Validate
	// would refuse.
	UpdateKey(ctx context.Context, name string, step int64, description string) error
}

// KeyChange is a change to a key (`PATCH /v1/keys/{key}`, the gRPC
// UpdateKey, `idforge keys update`); a nil field is left as it is.
type KeyChange struct {
	// Step is a segment key's stored step (1 to MaxStep).
	Step *int64
	// Description is free text; "" clears it.
	Description *string
	// MinStep and MaxStep are a segment key's own adaptive-step bounds,
	// which take the place of the node's on every node; 0 clears one,
	// falling back to the node's.
	MinStep, MaxStep *int64
	// Order is the key's order. A key's order is fixed when it is
	// created: the same order is accepted (nothing changes), another is
	// refused with ErrUnsafeChange.
	Order *Order
}

// ValidateUpdate checks what KeyUpdater.UpdateKey may store for k, a key
// as it stands: a step in [1, MaxStep] for a segment key and 0 for any
// other, and a description Validate accepts. Errors wrap
// ErrInvalidArgument and name the key.
func (k Key) ValidateUpdate(step int64, description string) error {
	k.Description = description
	if k.Strategy == StrategySegment {
		if step < 1 || step > MaxStep {
			return fmt.Errorf("%w: key %q: step %d out of range [1, %d]", ErrInvalidArgument, k.Name, step, MaxStep)
		}
		// Validate's first-segment rule is about creating; an existing key
		// only needs the step's own range.
		k.Step, k.MaxID = step, 1
	} else if step != 0 {
		return fmt.Errorf("%w: key %q: step applies to segment keys only, and this is a %s key", ErrInvalidArgument, k.Name, k.Strategy)
	}
	return k.Validate()
}

// A PeriodCounter counts within periods that restart: every second, day,
// month. Serial numbers such as 20170304 + 00001 combine the period with
// its count.
type PeriodCounter interface {
	// Next returns the next number of the period containing at, counting
	// from 1, and the start of the period it was counted in. That period
	// may be later than at's: when the period's cap is reached and the
	// counter waits for the next one, or when the clock went back behind a
	// period already counted in. Numbers never repeat within a period.
	Next(ctx context.Context, at time.Time) (n int64, period time.Time, err error)
}

// A PeriodReporter is a PeriodCounter that tells which calendar periods it
// counts in, so that a serial template can check that its dates show the
// period: a per-day count under a date without the day would repeat its
// numbers every day.
type PeriodReporter interface {
	// CountsPer returns the period ("second", "minute", "hour", "day" or
	// "month") and the time zone whose calendar it follows.
	CountsPer() (period string, loc *time.Location)
}

// Unpacked is a date-packed number (a source with date_packed, the Redis
// order-number scheme) decoded by explain: the period it was counted in
// and its count, the same on every surface.
type Unpacked struct {
	ID     int64
	Source string
	// Time is the start of the period, in Zone's local time.
	Time time.Time
	// Period is the counter's: "second", "minute", "hour", "day" or
	// "month"; Zone the IANA zone whose calendar it follows.
	Period, Zone string
	Count        int64
	// Bits is how many low bits hold the count.
	Bits int
}

// Serial is the definition of a serial number: a template (see package
// serial) that renders business numbers such as 2017030400001.
type Serial struct {
	// Name identifies the serial; it follows the rules of key names.
	Name string
	// Template is the serial's template text.
	Template string
	// TimeZone is the IANA zone its dates render in; empty means UTC.
	TimeZone string
	// Description is free text for operators.
	Description string
	// Gapless makes the serial gap-free: its numbers come from a
	// GaplessStore, each reserved, then committed or voided, and plain
	// issuing is refused (ErrWrongStrategy). Its template shows the number
	// with its one @{seq:…} expression, whose name only labels it.
	Gapless bool
	// ReuseExpired hands a reservation that expired to the next one,
	// instead of voiding it, so that committed numbers stay contiguous.
	// Expiry is how long a reservation waits for its commit; 0 means
	// DefaultReservationExpiry. Both only with Gapless.
	ReuseExpired bool
	Expiry       time.Duration
	// Updated is when the definition last changed, as the store reports it.
	Updated time.Time
}

// DefaultReservationExpiry is a gap-free serial's Expiry when left zero.
const DefaultReservationExpiry = 5 * time.Minute

// The states of a gap-free serial's number (Reservation.State).
const (
	Reserved  = "reserved"
	Committed = "committed"
	Voided    = "voided"
)

// Reservation is one number of a gap-free serial and what became of it.
type Reservation struct {
	// ID names the reservation for Commit and Void: "<number>-<token>".
	ID     string
	Number int64
	// Value is the serial as rendered for the reservation.
	Value string
	// State is Reserved, Committed or Voided; Reason says why a number
	// was voided ("expired" when nobody committed it in time).
	State, Reason string
	// Reserved is when it was reserved, Expires when the reservation
	// ends, Updated when it was last committed or voided.
	Reserved, Expires, Updated time.Time
}

// ReasonExpired is the Reason of a reservation voided at its expiry.
const ReasonExpired = "expired"

// GaplessStore is implemented by stores that keep gap-free serials: each
// call is one transaction, and the number is allocated in the same one as
// the row that records it, so a number either exists with its row or was
// never handed out. Errors wrap ErrUnknownReservation, ErrAlreadyCommitted,
// ErrReservationExpired or ErrReservationVoided as their names say.
type GaplessStore interface {
	// Reserve takes the serial's next number (with def.ReuseExpired, the
	// lowest expired reservation's, when there is one) until now+expiry
	// and records value(number) as its serial.
	Reserve(ctx context.Context, def Serial, now time.Time, value func(int64) (string, error)) (Reservation, error)
	// Commit and Void end a reservation by its ID.
	Commit(ctx context.Context, def Serial, id string, now time.Time) (Reservation, error)
	Void(ctx context.Context, def Serial, id, reason string, now time.Time) (Reservation, error)
	// Audit lists the numbers from..to (at most MaxAudit of them) in
	// order, and returns the last number handed out.
	Audit(ctx context.Context, def Serial, from, to int64, now time.Time) ([]Reservation, int64, error)
}

// MaxAudit is the most numbers one audit lists.
const MaxAudit = 1000

// SerialStore is implemented by stores that keep serial definitions, so
// that a serial defined through the API reaches every node.
type SerialStore interface {
	// CreateSerial stores a definition; a taken name is an error wrapping
	// ErrKeyExists.
	CreateSerial(ctx context.Context, s Serial) error
	// Serial returns one definition, or an error wrapping ErrUnknownKey.
	Serial(ctx context.Context, name string) (Serial, error)
	// Serials returns every definition, sorted by name.
	Serials(ctx context.Context) ([]Serial, error)
}

// MaxTemplateLen is the longest serial template stored.
const MaxTemplateLen = 1024

// Validate checks what a store can check of a serial definition: the name,
// a non-empty template of at most MaxTemplateLen bytes, and the lengths of
// the other fields. Whether the template parses is the serial package's
// business. Errors wrap ErrInvalidKey or ErrInvalidArgument.
func (s Serial) Validate() error {
	if err := ValidateKeyName(s.Name); err != nil {
		return err
	}
	switch {
	case s.Template == "":
		return fmt.Errorf("%w: serial %q: empty template", ErrInvalidArgument, s.Name)
	case len(s.Template) > MaxTemplateLen:
		return fmt.Errorf("%w: serial %q: template is %d bytes, at most %d allowed", ErrInvalidArgument, s.Name, len(s.Template), MaxTemplateLen)
	case len(s.TimeZone) > 64:
		return fmt.Errorf("%w: serial %q: time zone name too long", ErrInvalidArgument, s.Name)
	case len(s.Description) > MaxDescriptionLen:
		return fmt.Errorf("%w: serial %q: description is %d bytes, at most %d allowed", ErrInvalidArgument, s.Name, len(s.Description), MaxDescriptionLen)
	case !utf8.ValidString(s.Template) || !utf8.ValidString(s.Description) || !utf8.ValidString(s.TimeZone),
		strings.ContainsRune(s.Template+s.Description+s.TimeZone, 0):
		return fmt.Errorf("%w: serial %q: not valid UTF-8 text", ErrInvalidArgument, s.Name)
	case !s.Gapless && (s.ReuseExpired || s.Expiry != 0):
		return fmt.Errorf("%w: serial %q: reuse_expired and expiry are for a gapless serial", ErrInvalidArgument, s.Name)
	case s.Expiry < 0 || s.Expiry%time.Millisecond != 0:
		return fmt.Errorf("%w: serial %q: expiry %v is not a positive number of milliseconds", ErrInvalidArgument, s.Name, s.Expiry)
	}
	return nil
}

// ReservationExpiry is Expiry, or its default.
func (s Serial) ReservationExpiry() time.Duration {
	if s.Expiry == 0 {
		return DefaultReservationExpiry
	}
	return s.Expiry
}

// SegmentReturner is implemented by stores that can take back the unused
// top of a node's claims when the node shuts down cleanly, so that a
// rolling restart leaves no gap.
type SegmentReturner interface {
	// ReturnSegment sets key's max_id back to from, but only if it is
	// still to, i.e. nobody has claimed since this node's newest claim
	// ended at to (a compare-and-set). It reports whether it did. Values
	// from from up must never have been issued.
	ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error)
}

// FailoverRepairer is implemented by stores that refuse claims after
// their database failed over to a replica that may lack the last claims
// (ErrStoreFailedOver), and by which an operator puts them back into
// service (`idforge keys repair`).
type FailoverRepairer interface {
	// FailoverState reports the server the store's claims were made on
	// and the server it reaches now; they differ after a fail-over.
	FailoverState(ctx context.Context) (FailoverState, error)
	// RepairFailover raises the max_id of the keys (every segment key
	// when keys is empty) to at least floor and records the server it
	// reaches as the one claims are made on, in one transaction. floor
	// must be above every ID ever handed out of those keys, on any node.
	RepairFailover(ctx context.Context, floor int64, keys []string) (Repaired, error)
}

// FailoverState is what a FailoverRepairer's fence says.
type FailoverState struct {
	// Recorded names the server claims were made on; empty when the
	// record is missing. Current names the server the store reaches.
	Recorded, Current string
}

// FailedOver reports whether claims are refused: the store reaches
// another server than the one claims were made on.
func (s FailoverState) FailedOver() bool { return s.Recorded == "" || s.Recorded != s.Current }

// Repaired is what RepairFailover did.
type Repaired struct {
	// Before is the fence before the repair; Server names the server
	// now accepted.
	Before FailoverState
	Server string
	// Raised lists the keys whose max_id was raised.
	Raised []RaisedKey
}

// RaisedKey is one key RepairFailover raised, from max_id From to To.
type RaisedKey struct {
	Key      string
	From, To int64
}

// Migrator is implemented by stores whose schema is created or upgraded
// on request (idforge migrate) rather than when they open.
type Migrator interface {
	// Migrate creates the tables idforge needs, or upgrades them, leaving
	// an existing Leaf leaf_alloc table and its rows as they are. It is
	// idempotent.
	Migrate(ctx context.Context) error
}

// Store is what a storage backend provides to the idforge server: the
// segment and key contracts plus a health check and Close.
type Store interface {
	SegmentStore
	KeyStore
	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources. It is idempotent.
	Close() error
}

// Limits every store applies, so that a key written by one backend can be
// read by any other: they share Leaf's leaf_alloc schema.
const (
	// MaxStep is the largest step a segment key may store: Leaf's step
	// column is int(11), a 32-bit integer in MySQL. Claims may still ask
	// for longer segments.
	MaxStep = math.MaxInt32
	// MaxDescriptionLen is the longest description, in bytes; it matches
	// Leaf's description column, varchar(256).
	MaxDescriptionLen = 256
)

// MaxSegmentID is the largest ID a segment key can issue. A claim is the
// half-open range [max_id, max_id+step) and its end is stored as the next
// max_id, so the end must itself fit in an int64: the last value a claim
// can hold is math.MaxInt64 − 1.
const MaxSegmentID = math.MaxInt64 - 1

// Validate reports whether k can be created: its name passes
// ValidateKeyName (the error wraps ErrInvalidKey), its strategy is known,
// a segment key has 1 ≤ Step ≤ MaxStep and a first segment that can be
// claimed (1 ≤ MaxID and MaxID+Step−1 ≤ MaxSegmentID: MaxID is the first
// ID issued, IDs are always positive, and a key whose first claim would
// pass the largest int64 could never issue at all), a key of another
// strategy has neither, the order is empty, node or (for a segment key)
// global, and the description is UTF-8 of at most
// MaxDescriptionLen bytes. Every other error wraps ErrInvalidArgument,
// names the key and, for a start or step out of range, says which range
// fits. It is ValidateUpTo(MaxSegmentID).
func (k Key) Validate() error { return k.ValidateUpTo(MaxSegmentID) }

// ValidateUpTo is Validate for a key whose IDs must not pass last, the
// largest ID it can show (such as 2^bits − 1 for a key whose format
// permutes its IDs within bits bits): a segment key's first segment,
// [MaxID, MaxID+Step), must lie within [1, last]. A last above
// MaxSegmentID counts as MaxSegmentID: no claim can pass it.
func (k Key) ValidateUpTo(last int64) error {
	if err := ValidateKeyName(k.Name); err != nil {
		return err
	}
	if _, err := ParseStrategy(string(k.Strategy)); err != nil {
		return fmt.Errorf("%w (key %q)", err, k.Name)
	}
	if k.Strategy == StrategySegment {
		if err := k.checkFirstSegment(min(last, MaxSegmentID)); err != nil {
			return err
		}
	} else if k.Step != 0 || k.MaxID != 0 {
		return fmt.Errorf("%w: key %q: step and start apply to segment keys only", ErrInvalidArgument, k.Name)
	}
	if o, err := ParseOrder(string(k.Order)); err != nil {
		return fmt.Errorf("%w (key %q)", err, k.Name)
	} else if o == OrderGlobal && k.Strategy != StrategySegment {
		return fmt.Errorf("%w: key %q: order global applies to segment keys only, and this is a %s key", ErrInvalidArgument, k.Name, k.Strategy)
	}
	if len(k.Description) > MaxDescriptionLen {
		return fmt.Errorf("%w: key %q: description is %d bytes, at most %d allowed", ErrInvalidArgument, k.Name, len(k.Description), MaxDescriptionLen)
	}
	if !utf8.ValidString(k.Description) || strings.ContainsRune(k.Description, 0) {
		return fmt.Errorf("%w: key %q: description is not valid UTF-8 text", ErrInvalidArgument, k.Name)
	}
	return nil
}

// checkFirstSegment reports whether a segment key's step and start leave
// room for its first claim, [MaxID, MaxID+Step), within [1, last]; the
// error says which start or step would fit.
func (k Key) checkFirstSegment(last int64) error {
	maxStep := min(int64(MaxStep), last)
	if k.Step < 1 || k.Step > maxStep {
		if maxStep < MaxStep {
			return fmt.Errorf("%w: key %q: step %d out of range [1, %d]: it can issue only IDs 1 to %d", ErrInvalidArgument, k.Name, k.Step, maxStep, last)
		}
		return fmt.Errorf("%w: key %q: step %d out of range [1, %d]", ErrInvalidArgument, k.Name, k.Step, maxStep)
	}
	// Written so that nothing overflows: last−Step+1 ≥ 1 since Step ≤ last.
	maxStart := last - k.Step + 1
	if k.MaxID < 1 || k.MaxID > maxStart {
		return fmt.Errorf("%w: key %q: start %d out of range [1, %d] for step %d: the first segment holds IDs start to start+%d, and %d is the largest ID the key can issue",
			ErrInvalidArgument, k.Name, k.MaxID, maxStart, k.Step, k.Step-1, last)
	}
	return nil
}

// MaxKeyLen is the longest key name accepted; it matches the width of
// Leaf's biz_tag column (varchar(128)).
const MaxKeyLen = 128

// ValidateKeyName reports whether name can be used as a key (or as the
// name of a serial, a source or a counter): 1 to MaxKeyLen characters,
// each an ASCII letter or digit, '.', '_', ':' or '-'. The returned error
// wraps ErrInvalidKey and says what is wrong, naming a refused character
// by its position, itself and its code point.
func ValidateKeyName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	// Characters first: a name of non-ASCII characters is refused for
	// them, not for the bytes they take.
	if r, refused := chars.FirstRefused(name, keyNameChar); refused {
		return fmt.Errorf("%w: %s is not allowed; names use A-Z a-z 0-9 . _ : -", ErrInvalidKey, r)
	}
	if len(name) > MaxKeyLen {
		return fmt.Errorf("%w: %d characters long, at most %d allowed", ErrInvalidKey, len(name), MaxKeyLen)
	}
	return nil
}

// keyNameChar reports whether c may appear in a key name.
func keyNameChar(c rune) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '.' || c == '_' || c == ':' || c == '-'
}
