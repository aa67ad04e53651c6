package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/internal/fingerprint"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/snowflake"
)

// checkFingerprints refuses to start a node whose configuration changed,
// since its first use, in a way that can repeat values (see package
// internal/fingerprint): the snowflake layout, a balanced source's
// members or their order, an expansion's bits, a key's format or its
// secret, the obfuscate plugins, a format or the obfuscate plugins
// removed while keys still issue. It records nothing: Open records what
// is used for the first time (recordFingerprints) once everything else
// opened, so that a configuration that never ran is not recorded. A
// store that keeps no definitions checks nothing.
func (n *Node) checkFingerprints(ctx context.Context, s Settings, layout snowflake.Layout) error {
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
	if err := n.guard(ctx, ds, fingerprint.Layout(layout.Canonical())); err != nil {
		return err
	}
	for _, sc := range s.Sources {
		if err := n.guard(ctx, ds, fingerprint.Source(sc.Name, sc.Balance, sc.Expand)); err != nil {
			return errctx.In(err, "source %q", sc.Name)
		}
	}
	formatted := map[string]bool{}
	for _, k := range s.Keys {
		if k.Format == "" {
			continue
		}
		formatted[k.Name] = true
		f, err := obfuscate.ParseFormat(k.Format)
		if err != nil {
			return errctx.In(err, "key %q", k.Name)
		}
		var key []byte
		if f.Bits() > 0 {
			if key, err = secret(k.FormatKey, s.Getenv); err != nil {
				return errctx.In(err, "key %q: format_key", k.Name)
			}
		}
		if err := n.guard(ctx, ds, fingerprint.Format(k.Name, f.String(), key)); err != nil {
			return errctx.In(err, "key %q", k.Name)
		}
	}
	if err := n.checkObfuscation(ctx, ds, s, recorded); err != nil {
		return err
	}
	// A key whose format was removed while it still issues shows its raw
	// IDs, which can equal the permuted ones it showed before.
	for _, d := range recorded {
		key, ok := strings.CutPrefix(d.Name, fingerprint.KindFormat+"/")
		if !ok || formatted[key] || !n.stillIssues(ctx, ds, key) {
			continue
		}
		if err := fingerprint.Absent(ctx, ds, fingerprint.Format(key, "", nil)); err != nil {
			return errctx.In(err, "key %q", key)
		}
	}
	return nil
}

// stillIssues reports whether key is in the store and not retired.
func (n *Node) stillIssues(ctx context.Context, ds idforge.DefinitionStore, key string) bool {
	if _, err := n.store.Key(ctx, key); errors.Is(err, idforge.ErrUnknownKey) {
		return false
	}
	d, err := ds.Definition(ctx, issuer.KindKey, key)
	return err != nil || !d.Retired
}

// checkObfuscation guards the obfuscate plugins as one definition: their
// keys, order, bits and secrets. Removing every one of them once recorded
// is refused too: the keys they covered would show raw IDs.
func (n *Node) checkObfuscation(ctx context.Context, ds idforge.DefinitionStore, s Settings, recorded []idforge.Definition) error {
	var canonical, summary strings.Builder
	for _, c := range s.Plugins {
		if c.Kind != "obfuscate" {
			continue
		}
		key, err := secret(c.Key, s.Getenv)
		if err != nil {
			return errctx.In(err, "plugin obfuscate: key")
		}
		line := fmt.Sprintf("keys=%v order=%d bits=%d", c.Keys, c.Order, c.Bits)
		fmt.Fprintf(&canonical, "%s secret=%x\n", line, key)
		if summary.Len() > 0 {
			summary.WriteString("; ")
		}
		summary.WriteString(line)
	}
	d := fingerprint.Obfuscation(canonical.String(), summary.String())
	if canonical.Len() > 0 {
		return n.guard(ctx, ds, d)
	}
	for _, r := range recorded {
		if r.Name == d.Kind+"/"+d.Name {
			return fingerprint.Absent(ctx, ds, d)
		}
	}
	return nil
}

// guard verifies d and keeps it for recordFingerprints.
func (n *Node) guard(ctx context.Context, ds idforge.DefinitionStore, d fingerprint.Def) error {
	if err := fingerprint.Verify(ctx, ds, d); err != nil {
		return err
	}
	n.fingerprints = append(n.fingerprints, d)
	return nil
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
