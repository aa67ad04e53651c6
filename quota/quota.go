// Package quota refuses calls for IDs before anything is drawn: a quota
// allows a key (and, optionally, each token) N IDs per second, minute,
// hour, day or month, counted in IDs, not calls; it may close keys
// outright, or allow them only some output formats. A refusal wraps
// idforge.ErrRejected (HTTP 403 "rejected") and names the quota and when
// it resets; a refused call consumes nothing, and a call for several IDs
// that the rest of the quota cannot cover is refused whole.
//
// Quotas are kept as idforge.Definitions of kind "quota", so that one
// defined through the API on one node reaches every node sharing the
// store (Manager). A quota with a Counter URL is counted in that shared
// counter store (package sequence's per-period CounterStore: Redis, an SQL
// row, MongoDB), so that it means the same on a cluster; each node takes
// the quota in small leases from the period's shared count (see Spec.Lease).
// Without a Counter each node counts alone and allows the Limit by itself.
package quota

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/sequence"
)

// Kind is the idforge.Definition kind quotas are stored under.
const Kind = "quota"

// Formats are the names a Spec's Formats may list: "default" is the
// key's own format (no ?format= asked for), the others the text stages of
// obfuscate.ParseFormat.
var Formats = []string{"default", "decimal", "hex", "base62", "sqids"}

// MaxLease is the largest lease a node takes from a shared count.
const MaxLease = 1000

// Spec is one quota, as stored (JSON) and as the config file's
// [[quotas]] tables and POST /v1/quotas write it.
type Spec struct {
	// Name identifies the quota; it follows the rules of key names.
	Name string `json:"name" toml:"name"`
	// Keys are the keys (and serials, by their names) the quota applies
	// to: a name, a prefix ending in "*" ("order-*"), or "*" for every
	// key. Empty means every key. Each key has its own count.
	Keys []string `json:"keys,omitempty" toml:"keys"`
	// Tokens limits the quota to callers authorized with these tokens
	// (by the token's name in [auth]); empty means every caller. A quota
	// that lists tokens counts each (key, token) apart.
	Tokens []string `json:"tokens,omitempty" toml:"tokens"`
	// Limit is how many IDs a key (or key and token) may take per Per.
	// Zero means no limit (a quota that only closes keys or limits
	// formats); a limit must be positive.
	Limit int64 `json:"limit,omitempty" toml:"limit"`
	// Per is the period of Limit: second, minute, hour, day or month
	// (UTC calendar periods).
	Per string `json:"per,omitempty" toml:"per"`
	// Closed refuses every call of the matched keys.
	Closed bool `json:"closed,omitempty" toml:"closed"`
	// Formats, when not empty, allows only these formats (see Formats)
	// to be asked for.
	Formats []string `json:"formats,omitempty" toml:"formats"`
	// Counter is the URL of a per-period counter store shared by every
	// node (sequence.OpenCounterStore: redis://, mysql://, postgres://, sqlite://, mongodb://),
	// without its counter parameters. Empty means that each node counts
	// alone: a cluster of n nodes then allows up to n × Limit.
	Counter string `json:"counter,omitempty" toml:"counter"`
	// Description is free text for operators.
	Description string `json:"description,omitempty" toml:"description"`
	// Origin says where the quota was defined: idforge.OriginFile or
	// idforge.OriginAPI. It is set
	// by Manager and ignored on input.
	Origin string `json:"origin,omitempty" toml:"-"`
	// Retired marks a quota taken out of service through the API; it
	// refuses nothing. Set by Manager.
	Retired bool `json:"retired,omitempty" toml:"-"`
}

// Validate checks a quota without opening anything. Errors wrap
// idforge.ErrInvalidArgument (idforge.ErrInvalidKey for a bad name) and
// say what is wrong.
func (s Spec) Validate() error {
	if err := idforge.ValidateKeyName(s.Name); err != nil {
		return fmt.Errorf("%w (quota name)", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: quota %q: "+format, append([]any{idforge.ErrInvalidArgument, s.Name}, args...)...)
	}
	for _, k := range s.Keys {
		if err := checkPattern(k); err != nil {
			return bad("key pattern %q: %v", k, err)
		}
	}
	for _, t := range s.Tokens {
		if t == "" || len(t) > idforge.MaxKeyLen {
			return bad("token name %q: want 1 to %d characters", t, idforge.MaxKeyLen)
		}
	}
	for _, f := range s.Formats {
		if !slices.Contains(Formats, f) {
			return bad("unknown format %q (formats: %s)", f, strings.Join(Formats, ", "))
		}
	}
	switch {
	case s.Limit < 0:
		return bad("limit %d: a quota allows a positive number of IDs", s.Limit)
	case s.Limit > sequence.MaxCap:
		return bad("limit %d: at most %d", s.Limit, int64(sequence.MaxCap))
	case s.Limit > 0 && s.Per == "":
		return bad("limit %d needs per: second, minute, hour, day or month", s.Limit)
	case s.Limit == 0 && s.Per != "":
		return bad("limit 0 per %s: a quota allows a positive number of IDs (close the keys with closed = true)", s.Per)
	case s.Limit == 0 && !s.Closed && len(s.Formats) == 0:
		return bad("refuses nothing: give a positive limit and per, closed, or formats")
	case s.Closed && (s.Limit > 0 || len(s.Formats) > 0):
		return bad("a closed quota refuses every call: limit and formats make no sense with it")
	case s.Counter != "" && s.Limit == 0:
		return bad("counter is where a limit is counted; there is no limit")
	case len(s.Description) > idforge.MaxDescriptionLen:
		return bad("description is %d bytes, at most %d allowed", len(s.Description), idforge.MaxDescriptionLen)
	}
	if s.Per != "" {
		if _, err := sequence.ParsePeriod(s.Per); err != nil {
			return bad("unknown period %q: want second, minute, hour, day or month", s.Per)
		}
	}
	return nil
}

// CheckTokens refuses a quota limited to a token that known (the names
// of the API tokens the node accepts: auth.Config.Names) does not name:
// no call would ever be counted against it. The error wraps
// idforge.ErrInvalidArgument and lists the names known.
func (s Spec) CheckTokens(known []string) error {
	for _, t := range s.Tokens {
		if slices.Contains(known, t) {
			continue
		}
		if len(known) == 0 {
			return fmt.Errorf("%w: quota %q: token %q: this node checks no tokens ([auth] lists none), so a quota limited to tokens would never apply",
				idforge.ErrInvalidArgument, s.Name, t)
		}
		return fmt.Errorf("%w: quota %q: no token is named %q (the tokens of [auth]: %s), so the quota would never apply",
			idforge.ErrInvalidArgument, s.Name, t, strings.Join(known, ", "))
	}
	return nil
}

// checkPattern accepts "*", a key name, or a key name followed by "*".
func checkPattern(p string) error {
	if p == "*" {
		return nil
	}
	name := strings.TrimSuffix(p, "*")
	if strings.Contains(name, "*") {
		return fmt.Errorf("'*' may only end a pattern")
	}
	if err := idforge.ValidateKeyName(name); err != nil {
		return err
	}
	return nil
}

// matches reports whether key matches the quota's Keys.
func (s Spec) matches(key string) bool {
	if len(s.Keys) == 0 {
		return true
	}
	for _, p := range s.Keys {
		if p == "*" || p == key || strings.HasSuffix(p, "*") && strings.HasPrefix(key, p[:len(p)-1]) {
			return true
		}
	}
	return false
}

// Lease is how many IDs of the quota one node takes from the shared count
// at a time: 1 up to a limit of 64 (so small quotas are exact), then
// Limit/64, at most MaxLease. The cluster never exceeds Limit; a node may
// refuse while another still holds up to Lease−1 unused IDs of the period.
func (s Spec) Lease() int64 { return min(max(1, s.Limit/64), MaxLease) }

// Definition returns the quota as a definition to store.
func (s Spec) Definition() (idforge.Definition, error) {
	desc := s.Description
	s.Origin, s.Retired, s.Description = "", false, ""
	spec, err := strictjson.Marshal(s)
	if err != nil {
		return idforge.Definition{}, err
	}
	return idforge.Definition{Kind: Kind, Name: s.Name, Spec: string(spec), Description: desc}, nil
}

// FromDefinition reads a stored quota.
func FromDefinition(d idforge.Definition) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(strings.NewReader(d.Spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%w: quota %q: %v", idforge.ErrInvalidArgument, d.Name, err)
	}
	s.Name, s.Description, s.Retired, s.Origin = d.Name, d.Description, d.Retired, idforge.OriginAPI
	return s, nil
}

// serverFields are the JSON fields of Spec that a gRPC DefineRequest's
// spec leaves out: the request's own name and description, and what the
// server says.
var serverFields = []string{"name", "description", "origin", "retired"}

// FromRequest reads a quota as the gRPC API's DefineRequest carries it:
// spec is a JSON object of Spec's fields without name, description,
// origin and retired ({"keys":["order-*"],"limit":1000,"per":"minute"}),
// decoded strictly (internal/strictjson). Errors wrap
// idforge.ErrInvalidArgument; the quota itself is checked by Validate
// (Manager.Define).
func FromRequest(name, spec, description string) (Spec, error) {
	if strings.TrimSpace(spec) == "" {
		spec = "{}"
	}
	var s Spec
	if err := strictjson.Decode([]byte(spec), &s, "spec"); err != nil {
		return Spec{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(spec), &fields); err != nil {
		return Spec{}, fmt.Errorf("%w: spec: %v", idforge.ErrInvalidArgument, err)
	}
	for f := range fields {
		if slices.Contains(serverFields, strings.ToLower(f)) {
			return Spec{}, fmt.Errorf("%w: spec: %q is not a field of the spec (name and description are the request's, origin and retired the server's)",
				idforge.ErrInvalidArgument, f)
		}
	}
	s.Name, s.Description, s.Origin = name, description, idforge.OriginAPI
	return s, nil
}

// Redacted returns s as the API shows it: its counter URL without the
// password.
func (s Spec) Redacted() Spec {
	if s.Counter != "" {
		s.Counter = dsn.RedactedString(s.Counter)
	}
	return s
}

// RequestSpec returns s's fields as FromRequest reads them, without
// name, description, origin and retired.
func (s Spec) RequestSpec() string {
	b, _ := strictjson.Marshal(s)
	var fields map[string]json.RawMessage
	json.Unmarshal(b, &fields)
	for _, f := range serverFields {
		delete(fields, f)
	}
	b, _ = strictjson.Marshal(fields)
	return string(b)
}
