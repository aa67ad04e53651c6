package issuer

import (
	"slices"
	"sort"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
)

// SourceStatus is a named sequence source's status.
type SourceStatus struct {
	Name string
	sequence.Status
}

// Sources returns the status of every source that reports one
// (sequence.StatusReporter: balanced and expanded compositions, ticket
// servers), by name.
func (i *Issuer) Sources() []SourceStatus {
	var out []SourceStatus
	for name, src := range i.set.Sources {
		if st, ok := sequence.StatusOf(src); ok {
			out = append(out, SourceStatus{Name: name, Status: st})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Counters returns the names of the per-period counters, sorted.
func (i *Issuer) Counters() []string {
	out := make([]string, 0, len(i.set.Counters))
	for name := range i.set.Counters {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// sourceState is a source's entry in Keys: its status when it reports
// one.
func (i *Issuer) sourceState(name string) KeyState {
	ks := KeyState{}
	ks.Name, ks.Strategy = name, idforge.StrategySource
	if st, ok := sequence.StatusOf(i.set.Sources[name]); ok {
		ks.Source = &st
	}
	return ks
}

// weighSources adds to r the sources that are not up: the node is
// Degraded while some source has a member ejected (or fails with IDs
// left) and Unavailable when a source has nothing left to issue from.
func (i *Issuer) weighSources(r *Readiness) {
	for _, s := range i.Sources() {
		switch s.Health {
		case sequence.Up:
			continue
		case sequence.Down:
			r.Status = Unavailable
		default:
			if r.Status == Ready {
				r.Status = Degraded
			}
		}
		r.Sources = append(r.Sources, s)
	}
}
