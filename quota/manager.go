package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/periodic"
)

// Manager keeps the quotas of a node: those of the config file and those
// defined through the API, stored as idforge.Definitions of Kind in the
// node's store so that every node sharing it applies them (after its next
// Refresh). It feeds them to its Limiter. It is safe for concurrent use.
type Manager struct {
	lim    *Limiter
	defs   idforge.DefinitionStore // nil: the store keeps no definitions
	file   []Spec
	tokens []string // the API tokens' names (Spec.CheckTokens)
	log    *slog.Logger
}

// NewManager returns a Manager applying file (the config file's quotas)
// and, when st implements idforge.DefinitionStore, the quotas stored
// there, through lim. tokens names the API tokens the node accepts
// (auth.Config.Names; none when it checks no tokens): a quota limited to
// another token is refused (Spec.CheckTokens). It validates file (errors
// wrap idforge.ErrInvalidArgument for a bad or repeated file quota) and
// loads the quotas once, logging what Refresh could not do.
func NewManager(ctx context.Context, lim *Limiter, st any, file []Spec, tokens []string, log *slog.Logger) (*Manager, error) {
	m := &Manager{lim: lim, log: log, tokens: tokens}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.defs, _ = st.(idforge.DefinitionStore)
	seen := map[string]bool{}
	for _, s := range file {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if err := s.CheckTokens(tokens); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%w: quota %q declared twice", idforge.ErrInvalidArgument, s.Name)
		}
		seen[s.Name] = true
		s.Origin, s.Retired = idforge.OriginFile, false
		m.file = append(m.file, s)
	}
	if err := m.Refresh(ctx); err != nil {
		// A store or counter that is down now must not keep the node
		// from starting: what could be applied is, a quota whose counter
		// is down fails its calls, and RefreshEvery tries again.
		m.log.Warn("loading quotas", "err", err)
	}
	return m, nil
}

// Quotas returns every quota, the file's and the stored ones (retired
// included), sorted by name.
func (m *Manager) Quotas(ctx context.Context) ([]Spec, error) {
	out := append([]Spec(nil), m.file...)
	if m.defs != nil {
		defs, err := m.defs.Definitions(ctx, Kind)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			s, err := FromDefinition(d)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Quota returns one quota, or an error wrapping idforge.ErrUnknownKey.
func (m *Manager) Quota(ctx context.Context, name string) (Spec, error) {
	for _, s := range m.file {
		if s.Name == name {
			return s, nil
		}
	}
	if m.defs == nil {
		return Spec{}, fmt.Errorf("%w: no quota %q", idforge.ErrUnknownKey, name)
	}
	d, err := m.defs.Definition(ctx, Kind, name)
	if err != nil {
		if errors.Is(err, idforge.ErrUnknownKey) {
			return Spec{}, fmt.Errorf("%w: no quota %q", idforge.ErrUnknownKey, name)
		}
		return Spec{}, err
	}
	return FromDefinition(d)
}

// Define validates s, checks that its counter store opens, stores it and
// applies it on this node. A bad quota wraps idforge.ErrInvalidArgument;
// a name taken (by the file, a stored quota or a retired one) wraps
// idforge.ErrKeyExists; a store that keeps no definitions wraps
// idforge.ErrInvalidArgument too, as does a counter that cannot be
// opened.
func (m *Manager) Define(ctx context.Context, s Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := s.CheckTokens(m.tokens); err != nil {
		return err
	}
	for _, f := range m.file {
		if f.Name == s.Name {
			return fmt.Errorf("%w: quota %q is defined in the configuration file", idforge.ErrKeyExists, s.Name)
		}
	}
	if m.defs == nil {
		return fmt.Errorf("%w: the store keeps no definitions; declare quotas in the configuration file", idforge.ErrInvalidArgument)
	}
	switch d, err := m.defs.Definition(ctx, Kind, s.Name); {
	case err == nil && d.Retired:
		return fmt.Errorf("%w: quota %q was retired; a retired quota's name is never used again (a node may still hold it): choose a new name", idforge.ErrKeyExists, s.Name)
	case err == nil:
		return fmt.Errorf("%w: quota %q is already defined; retire it (DELETE /v1/quotas/%s) to define another under a new name", idforge.ErrKeyExists, s.Name, s.Name)
	case !errors.Is(err, idforge.ErrUnknownKey) && !errors.Is(err, idforge.ErrInvalidArgument):
		return err
	}
	if s.Counter != "" {
		// Open it before storing: a counter that cannot be reached is
		// refused now, not at every node's next refresh.
		m.lim.mu.Lock()
		_, err := m.lim.storeFor(ctx, s)
		m.lim.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%w: %v", idforge.ErrInvalidArgument, err)
		}
	}
	d, err := s.Definition()
	if err != nil {
		return err
	}
	if err := m.defs.CreateDefinition(ctx, d); err != nil {
		return err
	}
	return m.Refresh(ctx)
}

// Retire takes a stored quota out of service; its name is kept. A
// quota of the config file is refused (idforge.ErrInvalidArgument), an
// unknown one wraps idforge.ErrUnknownKey.
func (m *Manager) Retire(ctx context.Context, name string) error {
	for _, f := range m.file {
		if f.Name == name {
			return fmt.Errorf("%w: quota %q is defined in the configuration file; remove it there", idforge.ErrInvalidArgument, name)
		}
	}
	if m.defs == nil {
		return fmt.Errorf("%w: no quota %q", idforge.ErrUnknownKey, name)
	}
	if err := m.defs.RetireDefinition(ctx, Kind, name); err != nil {
		if errors.Is(err, idforge.ErrUnknownKey) {
			return fmt.Errorf("%w: no quota %q", idforge.ErrUnknownKey, name)
		}
		return err
	}
	return m.Refresh(ctx)
}

// Refresh applies the file's quotas and the store's live ones. A stored
// quota that no longer validates is logged and left out; one whose
// counter store cannot be opened fails the calls it applies to (see
// Limiter.Set), and Refresh returns that error.
func (m *Manager) Refresh(ctx context.Context) error {
	specs := append([]Spec(nil), m.file...)
	if m.defs != nil {
		defs, err := m.defs.Definitions(ctx, Kind)
		if err != nil {
			return err
		}
		for _, d := range defs {
			s, err := FromDefinition(d)
			if err == nil {
				err = s.Validate()
			}
			if err != nil {
				m.log.Error("stored quota left out", "quota", d.Name, "err", err)
				continue
			}
			specs = append(specs, s)
		}
	}
	return m.lim.Set(ctx, specs)
}

// RefreshEvery calls Refresh every interval until ctx ends, logging
// failures, so that quotas defined on other nodes apply here.
func (m *Manager) RefreshEvery(ctx context.Context, interval time.Duration) {
	periodic.Run(ctx, interval, m.Refresh, func(err error) { m.log.Warn("refreshing quotas", "err", err) })
}
