package e2e

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// Op is one request of a History: when the client sent it, when it had
// the answer, and the IDs the answer held.
type Op struct {
	Began, Ended time.Time
	IDs          []int64
}

// History records requests for IDs with their times, to check the order
// a key in global order promises. It is safe for concurrent use.
type History struct {
	mu  sync.Mutex
	ops []Op
}

// Add records a request that returned ids; began must be read before the
// request was sent and ended after its answer arrived.
func (h *History) Add(began, ended time.Time, ids []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, Op{Began: began, Ended: ended, IDs: ids})
}

// Len returns the number of requests and of IDs recorded.
func (h *History) Len() (ops, ids int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, op := range h.ops {
		ids += len(op.IDs)
	}
	return len(h.ops), ids
}

// Check returns an error unless every ID was recorded once and every
// request's IDs are all greater than every ID of every request that
// ended before it began: the order is linearizable. IDs being numbers,
// this is checked directly over the whole history, in O(n log n): the
// requests sorted by end with the running maximum of their IDs, and each
// request's smallest ID compared with the maximum of those that ended
// before it began.
func (h *History) Check() error {
	h.mu.Lock()
	ops := slices.Clone(h.ops)
	h.mu.Unlock()
	var all []int64
	for _, op := range ops {
		all = append(all, op.IDs...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return fmt.Errorf("ID %d was issued more than once (%d IDs checked)", all[i], len(all))
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Ended.Before(ops[j].Ended) })
	upTo := make([]int64, len(ops)) // upTo[k]: the largest ID of ops[0..k]
	var top int64
	for k, op := range ops {
		if len(op.IDs) > 0 {
			top = max(top, slices.Max(op.IDs))
		}
		upTo[k] = top
	}
	for _, op := range ops {
		if len(op.IDs) == 0 {
			continue
		}
		// The requests that ended before op began are ops[:before].
		before := sort.Search(len(ops), func(k int) bool { return !ops[k].Ended.Before(op.Began) })
		if before == 0 {
			continue
		}
		if low := slices.Min(op.IDs); low <= upTo[before-1] {
			var by Op
			for _, o := range ops[:before] {
				if slices.Contains(o.IDs, upTo[before-1]) {
					by = o
				}
			}
			return fmt.Errorf("a request that began at %s returned %d, but one that ended %s before it began (at %s) had returned %d (%d requests checked)",
				op.Began.Format(time.StampMicro), low, op.Began.Sub(by.Ended), by.Ended.Format(time.StampMicro), upTo[before-1], len(ops))
		}
	}
	return nil
}
