package issuer

import (
	"context"
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

// StoreSource names the store among the sources when it reports its
// databases' status (store/shards), unless a source takes the name.
const StoreSource = "store"

// Sources returns the status of every open sequence source that reports
// one (sequence.StatusReporter: balanced and expanded compositions,
// ticket servers, a store of several databases as StoreSource), by name: the configuration's (Settings.Sources) and
// the live ones defined through the API that this node has open
// (Definitions.Opened). It is the one registry of open sources: GET
// /v1/health/sources, the status on /v1/sources and /v1/keys, the admin
// page, readiness (/readyz, gRPC health) and /metrics all read it.
func (i *Issuer) Sources() []SourceStatus {
	var out []SourceStatus
	add := func(name string, g any) {
		if st, ok := sequence.StatusOf(g); ok {
			out = append(out, SourceStatus{Name: name, Status: st})
		}
	}
	for name, src := range i.set.Sources {
		add(name, src)
	}
	if _, taken := i.set.Sources[StoreSource]; !taken {
		add(StoreSource, i.store) // a store of several databases (store/shards)
	}
	if i.set.Definitions != nil {
		for name, g := range i.set.Definitions.Opened() {
			if _, inFile := i.set.Sources[name]; !inFile {
				add(name, g)
			}
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

// sourceKeys lists the sources as keys (strategy source; a request for
// IDs draws from one by its name): the configuration's and those defined
// through the API, retired ones marked, each with its status when it is
// open and reports one (Sources).
func (i *Issuer) sourceKeys(ctx context.Context) ([]KeyState, error) {
	status := map[string]sequence.Status{}
	for _, s := range i.Sources() {
		status[s.Name] = s.Status
	}
	state := func(name string, retired bool) KeyState {
		ks := KeyState{Retired: retired}
		ks.Name, ks.Strategy = name, idforge.StrategySource
		if st, ok := status[name]; ok {
			ks.Source = &st
		}
		return ks
	}
	var out []KeyState
	if i.set.Definitions == nil {
		for name := range i.set.Sources {
			out = append(out, state(name, false))
		}
		return out, nil
	}
	defs, err := i.set.Definitions.List(ctx, KindSource)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		out = append(out, state(d.Name, d.Retired))
	}
	return out, nil
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
