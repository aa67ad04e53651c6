package sequence

import (
	"sync"
	"time"
)

// Health is how well a source can issue: Up, Degraded or Down.
type Health string

// The levels of Health.
const (
	// Up: every member answers.
	Up Health = "up"
	// Degraded: the source issues, but some member is ejected or
	// exhausted, or its latest call failed.
	Degraded Health = "degraded"
	// Down: no member is left to issue from.
	Down Health = "down"
)

// Worse returns the worse of two levels (Down over Degraded over Up).
func Worse(a, b Health) Health {
	rank := func(h Health) int {
		switch h {
		case Down:
			return 2
		case Degraded:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// Status is the state of a source or composition for operators: what
// metrics, /readyz, the API's source listing and the admin page show.
// Counters run from the source's creation; zero fields are unknown or
// do not apply.
type Status struct {
	// Kind names what reports: "balanced", "expanded", "tickets".
	Kind string `json:"kind"`
	// Health is the source's level now.
	Health Health `json:"health"`
	// Calls and Failures count the source's calls of its backend (for a
	// composition, of its members or inner source).
	Calls    uint64 `json:"calls"`
	Failures uint64 `json:"failures"`
	// LastError is the newest failure, and LastErrorAt when it happened;
	// empty and zero when there was none.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// Members are a composition's members or a multi-server source's
	// servers, by index.
	Members []MemberStatus `json:"members,omitempty"`
	// Prefetch is a memory expansion's buffer (compose.Expanded).
	Prefetch *PrefetchStatus `json:"prefetch,omitempty"`
	// Inner is the status of the source a composition wraps, when that
	// one reports its own.
	Inner *Status `json:"inner,omitempty"`
}

// The states of a member (MemberStatus.State): admitted, serving calls;
// ejected, set aside for a rescue time; exhausted, set aside for good.
const (
	MemberAdmitted  = "admitted"
	MemberEjected   = "ejected"
	MemberExhausted = "exhausted"
)

// MemberStatus is one member of a composition or one server of a
// multi-server source.
type MemberStatus struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// State is MemberAdmitted, MemberEjected or MemberExhausted.
	State string `json:"state"`
	// RescueIn is how long an ejected member stays out; zero otherwise.
	RescueIn time.Duration `json:"rescue_in_ns,omitempty"`
	// Calls, Failures, SlowCalls and Ejections count the member's calls,
	// failed calls, slow successful calls and ejections.
	Calls     uint64 `json:"calls"`
	Failures  uint64 `json:"failures"`
	SlowCalls uint64 `json:"slow_calls,omitempty"`
	Ejections uint64 `json:"ejections,omitempty"`
	// Highest is the highest value the member handed out (a ticket
	// server's highest ticket); zero when not tracked.
	Highest     int64     `json:"highest,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

// PrefetchStatus is the buffer of a memory expansion.
type PrefetchStatus struct {
	// Blocks are the inner values fetched ahead and ready now; IDs the
	// IDs they hold (Blocks × 2^m).
	Blocks int   `json:"blocks"`
	IDs    int64 `json:"ids"`
	// Target is how many blocks the prefetcher aims to keep ready.
	Target int `json:"target"`
	// Rate is the measured consumption, in IDs per second.
	Rate float64 `json:"rate"`
	// Waits counts calls that found no block ready.
	Waits uint64 `json:"waits"`
}

// StatusReporter is implemented by sources that can describe their state:
// the compositions of sequence/compose and the multi-server sources.
type StatusReporter interface {
	Status() Status
}

// StatusOf returns g's status when it reports one.
func StatusOf(g any) (Status, bool) {
	if r, ok := g.(StatusReporter); ok {
		return r.Status(), true
	}
	return Status{}, false
}

// LastError remembers the newest error of a source and when it happened.
// The zero value is ready; it is safe for concurrent use.
type LastError struct {
	mu  sync.Mutex
	msg string
	at  time.Time
}

// Set records err (ignored when nil) as happening at t.
func (l *LastError) Set(err error, t time.Time) {
	if err == nil {
		return
	}
	l.mu.Lock()
	l.msg, l.at = err.Error(), t
	l.mu.Unlock()
}

// Get returns the newest error and when; "" and zero when there was none.
func (l *LastError) Get() (string, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msg, l.at
}

// Admitted reports whether the member serves calls.
func (m MemberStatus) Admitted() bool { return m.State == MemberAdmitted }

// FromMembers returns the status of a source of kind made of members:
// their calls and failures summed, the newest member error (prefixed by
// the member's name), and the health: Down when no member is
// admitted, Degraded when some member is not, Up otherwise.
func FromMembers(kind string, members []MemberStatus) Status {
	st := Status{Kind: kind, Health: Up, Members: members}
	admitted := 0
	for _, m := range members {
		if m.Admitted() {
			admitted++
		}
		st.Calls += m.Calls
		st.Failures += m.Failures
		if m.LastError != "" && !m.LastErrorAt.Before(st.LastErrorAt) {
			st.LastError, st.LastErrorAt = m.Name+": "+m.LastError, m.LastErrorAt
		}
	}
	switch admitted {
	case len(members):
	case 0:
		st.Health = Down
	default:
		st.Health = Degraded
	}
	return st
}
