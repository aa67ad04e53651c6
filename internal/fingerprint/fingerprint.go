// Package fingerprint guards definitions whose change can make values
// repeat: a balanced composition's members or their order, a memory
// expansion's bits, a key's format or its secret, the snowflake layout.
// At a definition's first use its fingerprint (a hash of what decides
// the values it makes, and a summary without secrets) is recorded in the
// store as an idforge.Definition of kind Kind, named "<kind>/<name>";
// later uses with another fingerprint are refused with an error wrapping
// idforge.ErrUnsafeChange that says what changed and what a safe
// migration is. It is the one owner of that rule: the node checks its
// configuration with it at start, and definitions made through the API
// are checked with it before they are stored.
package fingerprint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// Kind is the idforge.Definition kind fingerprints are recorded under.
const Kind = "fingerprint"

// Def is a definition to guard.
type Def struct {
	// Kind and Name name the definition ("source", "orders"); it is
	// recorded as Kind+"/"+Name.
	Kind, Name string
	// Canonical is what decides the values the definition makes, in a
	// canonical form. Only its hash is stored, so it may hold a secret.
	Canonical string
	// Summary describes the definition for the refusal, without secrets.
	Summary string
	// Safe says what a safe migration is, for the refusal.
	Safe string
}

// spec is a fingerprint's stored Spec.
type spec struct {
	Hash    string `json:"hash"`
	Summary string `json:"summary"`
}

// hash returns the fingerprint of d: SHA-256 of its kind and canonical
// form.
func (d Def) hash() string {
	h := sha256.Sum256([]byte("idforge fingerprint v1\x00" + d.Kind + "\x00" + d.Canonical))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Recorded returns the name d's fingerprint is recorded under,
// Kind+"/"+Name.
func (d Def) Recorded() string { return d.Kind + "/" + d.Name }

// Summary returns the description of the definition a recorded
// fingerprint guards, as it was first used; "" when rec holds none.
func Summary(rec idforge.Definition) string {
	var s spec
	_ = json.Unmarshal([]byte(rec.Spec), &s)
	return s.Summary
}

// Verify refuses d, with an error wrapping idforge.ErrUnsafeChange, when
// the fingerprint recorded for it differs; it records nothing. A caller
// that may still fail for other reasons verifies first and calls Check
// once the definition is in use, so that a definition that never ran is
// not recorded. A store that keeps no definitions (ds nil) checks
// nothing.
func Verify(ctx context.Context, ds idforge.DefinitionStore, d Def) error {
	_, err := verify(ctx, ds, d)
	return err
}

// verify is Verify, also reporting whether a fingerprint is recorded.
func verify(ctx context.Context, ds idforge.DefinitionStore, d Def) (found bool, err error) {
	if ds == nil {
		return true, nil
	}
	got, found, err := recorded(ctx, ds, d.Recorded())
	if err != nil || !found {
		return found, err
	}
	if got.Hash != d.hash() {
		return true, refusal(d, got.Summary)
	}
	return true, nil
}

// Check is Verify, and records d's fingerprint when the store has none
// for it (its first use).
func Check(ctx context.Context, ds idforge.DefinitionStore, d Def) error {
	found, err := verify(ctx, ds, d)
	if err != nil || found {
		return err
	}
	text, err := json.Marshal(spec{Hash: d.hash(), Summary: d.Summary})
	if err != nil {
		return err
	}
	err = ds.CreateDefinition(ctx, idforge.Definition{Kind: Kind, Name: d.Recorded(), Spec: string(text),
		Description: "recorded at first use; a change that could repeat values is refused"})
	if errors.Is(err, idforge.ErrKeyExists) {
		// Another node recorded it first: compare with what it recorded.
		return Check(ctx, ds, d)
	}
	if err != nil {
		return fmt.Errorf("recording the fingerprint of %s %q: %w", d.Kind, d.Name, err)
	}
	return nil
}

// Absent refuses, with an error wrapping idforge.ErrUnsafeChange, a
// definition that has gone while its fingerprint is recorded and what it
// decided still applies (a key whose format was removed still issues).
// d.Summary describes what takes its place.
func Absent(ctx context.Context, ds idforge.DefinitionStore, d Def) error {
	if ds == nil {
		return nil
	}
	got, found, err := recorded(ctx, ds, d.Recorded())
	if err != nil || !found {
		return err
	}
	return refusal(d, got.Summary)
}

// recorded reads the fingerprint recorded under name.
func recorded(ctx context.Context, ds idforge.DefinitionStore, name string) (spec, bool, error) {
	def, err := ds.Definition(ctx, Kind, name)
	if errors.Is(err, idforge.ErrUnknownKey) {
		return spec{}, false, nil
	}
	if err != nil {
		return spec{}, false, fmt.Errorf("reading the fingerprint of %s: %w", name, err)
	}
	var s spec
	if err := json.Unmarshal([]byte(def.Spec), &s); err != nil || s.Hash == "" {
		return spec{}, false, fmt.Errorf("%w: the fingerprint recorded for %s is not one this node can read: %q", idforge.ErrInvalidArgument, name, def.Spec)
	}
	return s, true, nil
}

func refusal(d Def, was string) error {
	return fmt.Errorf("%w: %s %q was first used as %s and is now %s: that change can make it issue values it issued before; %s",
		idforge.ErrUnsafeChange, d.Kind, d.Name, was, d.Summary, d.Safe)
}

// MemberURL is the canonical form of a sequence source's URL within a
// fingerprint: what names the server and the counter on it, without the
// password (which may be rotated) and with the query parameters sorted.
func MemberURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		for _, p := range dsn.PasswordParams {
			if strings.EqualFold(k, p) {
				delete(q, k)
			}
		}
	}
	u.RawQuery = q.Encode()
	return dsn.Redacted(u)
}

// Kinds of guarded definitions, the first part of a fingerprint's name.
const (
	KindSource = "source"
	KindFormat = "format"
	KindLayout = "snowflake"
	KindPlugin = "plugin"
	KindSerial = "serial"
)

// Serial is the guarded part of a serial from a node's configuration:
// whether it is gap-free. A gap-free serial counts its numbers in a table
// of its own, a plain one draws from a source or counter, so a node that
// issued the same serial the other way would repeat numbers.
func Serial(name string, gapless bool) Def {
	d := Def{Kind: KindSerial, Name: name, Canonical: "plain", Summary: "a serial that allows gaps",
		Safe: "gap-free and plain numbers are counted apart; keep the serial as it was first used on every node, " +
			"or define the other kind under a new name"}
	if gapless {
		d.Canonical, d.Summary = "gapless", "a gap-free serial"
	}
	return d
}

// Obfuscation is the guarded part of the obfuscate plugins (package
// plugin), all of them together as one definition, "plugin/obfuscate":
// each one's keys, order, bits and secret (hashed, never stored), in
// the order given. canonical lists them, one line each, secrets
// included; summary the same without secrets ("" when there is none).
func Obfuscation(canonical, summary string) Def {
	if summary == "" {
		summary = "no obfuscate plugin"
	}
	return Def{Kind: KindPlugin, Name: "obfuscate", Canonical: canonical, Summary: summary,
		Safe: "a changed permutation maps IDs onto ones already shown; keep the obfuscate plugins, their keys, bits and secrets, " +
			"or move the keys they cover to new keys and retire the old ones"}
}

// Source is the guarded part of a sequence source: its balanced members
// in order (none for a single URL, whose server an operator may move)
// and its memory expansion's bits.
func Source(name string, balance []string, expand int) Def {
	members := make([]string, len(balance))
	for i, m := range balance {
		members[i] = MemberURL(m)
	}
	d := Def{Kind: KindSource, Name: name,
		Canonical: fmt.Sprintf("balance=%s\nexpand=%d", strings.Join(members, "\n"), expand),
		Safe: "keep the members in their order and the expansion's bits as they were, or define a new source under a new name " +
			"(its values start afresh, so give it a key of its own) and retire the old one"}
	switch {
	case len(members) > 0:
		d.Summary = fmt.Sprintf("balanced over %d members [%s], expanded by %d bits", len(members), strings.Join(members, ", "), expand)
	default:
		d.Summary = fmt.Sprintf("a single source, expanded by %d bits", expand)
	}
	return d
}

// Format is the guarded part of a key's format: the whole format and the
// secret of its permutation (nil without one), which is hashed, never
// stored. spec "" is a key without a format.
func Format(key, spec string, secret []byte) Def {
	summary := "format " + spec
	switch {
	case spec == "":
		summary = "no format (decimal IDs)"
	case secret != nil:
		summary += " with its secret"
	}
	return Def{Kind: KindFormat, Name: key,
		Canonical: spec + "\x00" + string(secret), Summary: summary,
		Safe: "a new secret or format permutes IDs onto ones already shown; keep the format and its format_key, " +
			"or create a new key with the new format and retire this one (DELETE /v1/keys/" + key + ")"}
}

// Layout is the guarded snowflake layout, node-wide: every node sharing
// the store must compose IDs the same way. layout is its spec form
// (snowflake.Layout.String).
func Layout(layout string) Def {
	return Def{Kind: KindLayout, Name: "layout", Canonical: layout, Summary: "layout " + layout,
		Safe: "IDs of another layout can equal IDs already issued; keep the layout (every node sharing the store uses the same), " +
			"or issue the new layout's IDs from a store of their own"}
}
