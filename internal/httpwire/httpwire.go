// Package httpwire is the one owner of the JSON API's wire as both sides
// speak it: the answers of the /v1 endpoints the Go client reads, as
// server/httpapi writes them and client decodes them, and the query
// parameters both use. Error answers are internal/httperr's.
package httpwire

import (
	"strconv"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
)

// SerialParamPrefix marks a template parameter in the query string of
// GET /v1/serials/{name}: param.area=010 fills @{param:area}.
const SerialParamPrefix = "param."

// GET /v1/keys answers a page of keys at a time, in name order: limit
// keys (DefaultKeysPage when not given, at most MaxKeysPage) after the
// key named by the parameter after; the answer's next, when set, is the
// after of the following page.
const (
	DefaultKeysPage = 1000
	MaxKeysPage     = 10_000
)

// IDs is the answer of GET /v1/ids/{key}. IDs are strings: decimal by
// default, so that JavaScript clients lose no precision above 2^53, in
// the key's format (or ?format=) otherwise, and UUIDs or ULIDs for keys of
// those strategies.
type IDs struct {
	Key string   `json:"key"`
	IDs []string `json:"ids"`
}

// Serials is the answer of GET /v1/serials/{name}.
type Serials struct {
	Serial string   `json:"serial"`
	Values []string `json:"values"`
}

// Explain is the answer of GET /v1/explain/{id}: a snowflake ID decoded
// with the node's layout.
type Explain struct {
	ID         string           `json:"id"`
	Layout     string           `json:"layout"`
	Time       time.Time        `json:"time"`
	UnixMilli  int64            `json:"unix_ms"`
	Ticks      int64            `json:"ticks"`
	Datacenter int64            `json:"datacenter"`
	Worker     int64            `json:"worker"`
	Sequence   int64            `json:"sequence"`
	Fixed      map[string]int64 `json:"fixed,omitempty"`
	Expires    time.Time        `json:"expires"`
}

// NewExplain returns the answer for id, whose fields under layout l are p.
func NewExplain(id string, l snowflake.Layout, p snowflake.Parts) Explain {
	return Explain{
		ID: id, Layout: l.String(),
		Time: p.Time, UnixMilli: p.Time.UnixMilli(), Ticks: p.Ticks,
		Datacenter: p.Datacenter, Worker: p.Worker, Sequence: p.Sequence,
		Fixed: p.Fixed, Expires: l.Expires(),
	}
}

// Unpacked is the answer of GET /v1/explain/{id}?source=NAME (and of
// idforge explain --source --json): a date-packed number decoded.
type Unpacked struct {
	ID     string    `json:"id"`
	Source string    `json:"source"`
	Time   time.Time `json:"time"`
	Period string    `json:"period"`
	Zone   string    `json:"zone"`
	Count  int64     `json:"count"`
	Bits   int       `json:"bits"`
}

// NewUnpacked returns the answer for u.
func NewUnpacked(u idforge.Unpacked) Unpacked {
	return Unpacked{ID: strconv.FormatInt(u.ID, 10), Source: u.Source, Time: u.Time, Period: u.Period, Zone: u.Zone, Count: u.Count, Bits: u.Bits}
}

// Unpacked returns the number a explains, its time in its zone when this
// machine knows the zone.
func (a Unpacked) Unpacked() (idforge.Unpacked, error) {
	id, err := strconv.ParseInt(a.ID, 10, 64)
	if loc, lerr := time.LoadLocation(a.Zone); lerr == nil {
		a.Time = a.Time.In(loc)
	}
	return idforge.Unpacked{ID: id, Source: a.Source, Time: a.Time, Period: a.Period, Zone: a.Zone, Count: a.Count, Bits: a.Bits}, err
}

// Parts returns the fields of the ID e explains, its time in UTC.
func (e Explain) Parts() snowflake.Parts {
	return snowflake.Parts{Time: e.Time.UTC(), Ticks: e.Ticks, Datacenter: e.Datacenter, Worker: e.Worker, Sequence: e.Sequence, Fixed: e.Fixed}
}

// Keys is the answer of GET /v1/keys: one page of keys (see
// DefaultKeysPage), the node's snowflake generator and, when more keys
// follow, the after of the next page.
type Keys struct {
	Keys      []Key      `json:"keys"`
	Snowflake *Snowflake `json:"snowflake,omitempty"`
	Next      string     `json:"next,omitempty"`
}

// Snowflake describes a node's snowflake generator.
type Snowflake struct {
	Layout     string    `json:"layout"`
	Worker     int64     `json:"worker"`
	Datacenter int64     `json:"datacenter"`
	Expires    time.Time `json:"expires"`
	// Lease is the worker ID's lease: "unlimited" (a static or file ID,
	// or a ZooKeeper one), "held" until ValidUntil, or "lost" (IDs are
	// refused until a new worker ID is acquired).
	Lease      string     `json:"lease"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	// Now is the node's clock (idforge.SystemClock, the clock its
	// generator reads) when it answered, for the clock offset an operator
	// (idforge doctor) compares it with; LastIssued is the newest tick
	// issued in, ahead of Now while the generator borrows ahead.
	Now        time.Time  `json:"now"`
	LastIssued *time.Time `json:"last_issued,omitempty"`
}

// Key is a key as GET /v1/keys/{key} and the key list show it.
type Key struct {
	Key         string     `json:"key"`
	Strategy    string     `json:"strategy"`
	Step        int64      `json:"step,omitempty"`
	MaxID       string     `json:"max_id,omitempty"`
	Description string     `json:"description"`
	Format      string     `json:"format,omitempty"`
	Plugins     []string   `json:"plugins,omitempty"`
	Updated     *time.Time `json:"updated,omitempty"`
	Segment     *Segment   `json:"segment,omitempty"`
	// Retired marks a retired key (DELETE /v1/keys/{key}): it issues
	// nothing, and its name is never created again.
	Retired bool `json:"retired,omitempty"`
	// MinStep and MaxStep are a segment key's own adaptive-step bounds
	// (PATCH /v1/keys/{key}); absent: the node's.
	MinStep int64 `json:"min_step,omitempty"`
	MaxStep int64 `json:"max_step,omitempty"`
	// Order is a segment key's order across nodes (idforge.Order): node
	// or global.
	Order string `json:"order,omitempty"`
	// Health is a source key's health (sequence.Health): up, degraded
	// or down; empty for keys whose source reports none.
	Health string `json:"health,omitempty"`
	// LastError is the key's newest failure on this node (a failed
	// segment claim, a source's failed call), kept after it recovers, and
	// LastErrorAt when it happened.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// Segment is a segment key's live state on the node that answers.
type Segment struct {
	Current  *Range `json:"current"`
	Next     string `json:"next,omitempty"`
	Pending  *Range `json:"pending"`
	Buffered int64  `json:"buffered"`
	// BufferedSeconds is how long Buffered lasts at Rate.
	BufferedSeconds float64 `json:"buffered_seconds"`
	Rate            float64 `json:"rate"`
	Issued          int64   `json:"issued"`
	Waits           int64   `json:"waits"`
	Step            int64   `json:"step"`
	Loads           int64   `json:"loads"`
	Failures        int     `json:"failures"`
	LastError       string  `json:"last_error,omitempty"`
	// ClaimedUpTo is the end of the newest segment this node claimed
	// (segment.Stats.ClaimedUpTo), a decimal string; absent before the
	// first claim. `idforge keys repair --from-nodes` reads it.
	ClaimedUpTo string `json:"claimed_up_to,omitempty"`
}

// Range is a segment's values, Start included and End not, in decimal.
type Range struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Reservation is a number of a gap-free serial as POST
// /v1/serials/{name}/reserve, commit and void answer it; GET
// /v1/serials/{name}/audit lists them without reservation.
type Reservation struct {
	Reservation string    `json:"reservation,omitempty"`
	Number      int64     `json:"number"`
	Value       string    `json:"value"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
	Reserved    time.Time `json:"reserved"`
	Expires     time.Time `json:"expires"`
	Updated     time.Time `json:"updated"`
}

// NewReservation is r on the wire.
func NewReservation(r idforge.Reservation) Reservation {
	return Reservation{r.ID, r.Number, r.Value, r.State, r.Reason, r.Reserved, r.Expires, r.Updated}
}

// Go is w as the Go type.
func (w Reservation) Go() idforge.Reservation {
	return idforge.Reservation{ID: w.Reservation, Number: w.Number, Value: w.Value, State: w.State, Reason: w.Reason,
		Reserved: w.Reserved, Expires: w.Expires, Updated: w.Updated}
}

// End is the body of POST /v1/serials/{name}/commit and …/void (which
// needs Reason).
type End struct {
	Reservation string `json:"reservation"`
	Reason      string `json:"reason,omitempty"`
}

// Audit is the answer of GET /v1/serials/{name}/audit?from=&to=: every
// number from From to To (at most idforge.MaxAudit, and none above Last,
// the last number handed out), in order.
type Audit struct {
	Serial  string        `json:"serial"`
	From    int64         `json:"from"`
	To      int64         `json:"to"`
	Last    int64         `json:"last"`
	Numbers []Reservation `json:"numbers"`
}
