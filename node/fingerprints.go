package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/internal/fingerprint"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/snowflake"
)

// checkFingerprints refuses to start a node whose configuration changed,
// since its first use, in a way that can repeat values (see guarded and
// package internal/fingerprint). It records nothing: Open records what
// is used for the first time (recordFingerprints) once everything else
// opened, so that a configuration that never ran is not recorded. A
// store that keeps no definitions checks nothing.
func (n *Node) checkFingerprints(ctx context.Context, s Settings) error {
	ds, ok := n.store.(idforge.DefinitionStore)
	if !ok {
		n.log.Warn("the store keeps no definitions: changes to the layout, sources and key formats that could repeat values are not guarded")
		return nil
	}
	recorded, err := ds.Definitions(ctx, fingerprint.Kind)
	if errors.Is(err, idforge.ErrInvalidArgument) {
		// A database not migrated since definitions were added: serve
		// as before rather than refuse to start after an upgrade.
		n.log.Warn("changes to the layout, sources and key formats that could repeat values are not guarded: run `idforge migrate`", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	uses, gone, err := guarded(ctx, n.store, ds, s, recorded)
	if err != nil {
		return err
	}
	for _, d := range uses {
		if err := fingerprint.Verify(ctx, ds, d); err != nil {
			return inDef(err, d)
		}
	}
	for _, d := range gone {
		if err := fingerprint.Absent(ctx, ds, d); err != nil {
			return inDef(err, d)
		}
	}
	n.fingerprints = uses
	return nil
}

// FingerprintCheck is a fingerprint recorded in a store compared with a
// node's Settings, as Open compares them.
type FingerprintCheck struct {
	// Name is what is guarded: "snowflake/layout", "source/NAME",
	// "format/KEY" or "plugin/obfuscate".
	Name string
	// Recorded describes the definition as it was first used.
	Recorded string
	// Err is nil when the settings still match what is recorded; it
	// wraps idforge.ErrUnsafeChange, saying what changed and what a safe
	// migration is, when Open refuses them.
	Err error
	// Unused reports that the settings no longer use the definition, so
	// there is nothing to compare (a source or key format defined
	// through the API, or one removed harmlessly).
	Unused bool
}

// CheckFingerprints compares every fingerprint recorded in st with what
// s decides, by the rules Open refuses to start by, and reports each
// one, in name order; it records nothing. A store that keeps no
// definitions has none (nil).
func CheckFingerprints(ctx context.Context, st idforge.Store, s Settings) ([]FingerprintCheck, error) {
	ds, ok := st.(idforge.DefinitionStore)
	if !ok {
		return nil, nil
	}
	recorded, err := ds.Definitions(ctx, fingerprint.Kind)
	if err != nil {
		return nil, err
	}
	uses, gone, err := guarded(ctx, st, ds, s, recorded)
	if err != nil {
		return nil, err
	}
	byName := map[string]func() error{}
	for _, d := range uses {
		byName[d.Recorded()] = func() error { return fingerprint.Verify(ctx, ds, d) }
	}
	for _, d := range gone {
		byName[d.Recorded()] = func() error { return fingerprint.Absent(ctx, ds, d) }
	}
	out := make([]FingerprintCheck, 0, len(recorded))
	for _, r := range recorded {
		c := FingerprintCheck{Name: r.Name, Recorded: fingerprint.Summary(r)}
		if check, ok := byName[r.Name]; ok {
			c.Err = check()
		} else {
			c.Unused = true
		}
		out = append(out, c)
	}
	return out, nil
}

// guarded returns the definitions of s a fingerprint guards (uses: the
// snowflake layout, each source's members and expansion, each key's
// format and secret, the obfuscate plugins), and those whose fingerprint
// is recorded although s no longer defines them while what they decided
// still applies (gone: a key whose format was removed while it still
// issues shows its raw IDs, which can equal the permuted ones it showed
// before; removing every obfuscate plugin does the same to the keys they
// covered). Both are refused when they differ from what is recorded.
func guarded(ctx context.Context, st idforge.Store, ds idforge.DefinitionStore, s Settings, recorded []idforge.Definition) (uses, gone []fingerprint.Def, err error) {
	layout, err := snowflake.ParseLayout(cmp.Or(s.Layout, "twitter"))
	if err != nil {
		return nil, nil, err
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	uses = append(uses, fingerprint.Layout(layout.Canonical()))
	for _, sc := range s.Sources {
		uses = append(uses, fingerprint.Source(sc.Name, sc.Balance, sc.Expand))
	}
	formatted := map[string]bool{}
	for _, k := range s.Keys {
		if k.Format == "" {
			continue
		}
		formatted[k.Name] = true
		f, err := obfuscate.ParseFormat(k.Format)
		if err != nil {
			return nil, nil, errctx.In(err, "key %q", k.Name)
		}
		var key []byte
		if f.Bits() > 0 {
			if key, err = secret(k.FormatKey, getenv); err != nil {
				return nil, nil, errctx.In(err, "key %q: format_key", k.Name)
			}
		}
		uses = append(uses, fingerprint.Format(k.Name, f.String(), key))
	}
	for _, sd := range s.Serials {
		if sd.Gapless {
			uses = append(uses, fingerprint.Serial(sd.Name, true))
		} else {
			// Only gap-free serials are recorded: a plain one is refused
			// where the same name was first used gap-free.
			gone = append(gone, fingerprint.Serial(sd.Name, false))
		}
	}
	obf, err := obfuscation(s, getenv)
	if err != nil {
		return nil, nil, err
	}
	if obf.Canonical != "" {
		uses = append(uses, obf)
	}
	for _, r := range recorded {
		if r.Name == obf.Recorded() && obf.Canonical == "" {
			gone = append(gone, obf)
		}
		key, ok := strings.CutPrefix(r.Name, fingerprint.KindFormat+"/")
		if ok && !formatted[key] && stillIssues(ctx, st, ds, key) {
			gone = append(gone, fingerprint.Format(key, "", nil))
		}
	}
	return uses, gone, nil
}

// inDef names the definition d in a refusal of it.
func inDef(err error, d fingerprint.Def) error {
	switch d.Kind {
	case fingerprint.KindSource:
		return errctx.In(err, "source %q", d.Name)
	case fingerprint.KindFormat:
		return errctx.In(err, "key %q", d.Name)
	case fingerprint.KindSerial:
		return errctx.In(err, "serial %q", d.Name)
	}
	return err
}

// stillIssues reports whether key is in the store and not retired.
func stillIssues(ctx context.Context, st idforge.Store, ds idforge.DefinitionStore, key string) bool {
	if _, err := st.Key(ctx, key); errors.Is(err, idforge.ErrUnknownKey) {
		return false
	}
	d, err := ds.Definition(ctx, issuer.KindKey, key)
	return err != nil || !d.Retired
}

// obfuscation is the guarded part of the obfuscate plugins, as one
// definition: their keys, order, bits and secrets (Canonical "" when
// there is none).
func obfuscation(s Settings, getenv func(string) string) (fingerprint.Def, error) {
	var canonical, summary strings.Builder
	for _, c := range s.Plugins {
		if c.Kind != "obfuscate" {
			continue
		}
		o, _ := c.Settings.(plugin.ObfuscateConfig)
		key, err := secret(o.Key, getenv)
		if err != nil {
			return fingerprint.Def{}, errctx.In(err, "plugin obfuscate: key")
		}
		line := fmt.Sprintf("keys=%v order=%d bits=%d", c.Keys, c.Order, o.Bits)
		fmt.Fprintf(&canonical, "%s secret=%x\n", line, key)
		if summary.Len() > 0 {
			summary.WriteString("; ")
		}
		summary.WriteString(line)
	}
	return fingerprint.Obfuscation(canonical.String(), summary.String()), nil
}

// recordFingerprints records the fingerprints checkFingerprints verified
// that the store has none of yet: the node now uses them.
func (n *Node) recordFingerprints(ctx context.Context) error {
	ds, _ := n.store.(idforge.DefinitionStore)
	for _, d := range n.fingerprints {
		if err := fingerprint.Check(ctx, ds, d); err != nil {
			return err
		}
	}
	return nil
}
