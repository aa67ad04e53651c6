package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/idforge/idforge"
)

// batch is a group of calls of a key in global order that share one
// claim (group commit): each call joins it with the number of values it
// wants and gets the part of the claimed range at its offset, so calls
// get their parts in the order they joined.
type batch struct {
	n    int64 // values asked for by the calls that joined
	done chan struct{}
	// seg and err are the claim's outcome, set before done closes.
	seg idforge.Segment
	err error
}

// takeGlobal takes n values of a key in global order, all below limit,
// and hands them to got as one range. The call joins the open batch;
// when no claim is in flight it starts claiming it at once, else the
// batch is claimed as soon as the claim in flight returns. Either way the
// claim begins after the call joined (see the package documentation).
// Values at or above limit are lost, a gap: nothing above the limit could
// ever be shown. A call whose ctx ends first gets ctx's error and its
// values are lost too.
func (a *Allocator) takeGlobal(ctx context.Context, n, limit int64, got func(lo, hi int64)) error {
	a.mu.Lock()
	if a.closed {
		err := a.closedErrLocked()
		a.mu.Unlock()
		return err
	}
	b := a.open
	if b == nil {
		b = &batch{done: make(chan struct{})}
		a.open = b
	}
	if n > math.MaxInt64-b.n {
		a.mu.Unlock()
		return fmt.Errorf("%w: key %q: %d values do not fit one claim", idforge.ErrInvalidCount, a.key, n)
	}
	off := b.n
	b.n += n
	a.waits++
	if !a.claiming {
		a.claiming, a.open = true, nil
		a.loaderWG.Add(1)
		go a.claimBatches(b)
	}
	a.mu.Unlock()

	select {
	case <-b.done:
	case <-ctx.Done():
		return fmt.Errorf("key %q: waiting for a claim: %w", a.key, ctx.Err())
	}
	if b.err != nil {
		return b.err
	}
	lo := b.seg.Start + off
	hi := min(lo+n, b.seg.End, limit)
	if lo >= hi {
		return fmt.Errorf("%w: key %q: the next ID is %d or more", idforge.ErrSpaceExhausted, a.key, min(lo, limit))
	}
	got(lo, hi)
	return nil
}

// claimBatches claims b, then each batch that callers opened while the
// claim before it was in flight, until none is open. One runs at a time
// per Allocator.
func (a *Allocator) claimBatches(b *batch) {
	defer a.loaderWG.Done()
	for b != nil {
		b.seg, b.err = a.claimGlobal(b.n)
		close(b.done)
		a.mu.Lock()
		// Closing the batch here, before its claim begins, is what puts
		// every claim after the calls it serves.
		b, a.open = a.open, nil
		a.claiming = b != nil
		a.mu.Unlock()
	}
}

// claim asks the store for n values within ctx, which it cancels after,
// and says when it began and how long it took. Called without a.mu.
func (a *Allocator) claim(ctx context.Context, cancel func(), n int64) (seg idforge.Segment, began time.Time, took time.Duration, err error) {
	began = a.set.Clock.Now()
	if err = a.check(ctx); err == nil {
		seg, err = a.store.ClaimSegment(ctx, a.key, n)
	}
	took = a.set.Clock.Now().Sub(began)
	cancel()
	return seg, began, took, err
}

// claimGlobal makes one claim of exactly n values for a batch: no retry
// here (the store retries what it knows is safe), no backoff (callers
// retry, and a retry is a new call that begins later).
func (a *Allocator) claimGlobal(n int64) (idforge.Segment, error) {
	a.mu.Lock()
	if a.closed || a.backwards != nil {
		err := a.backwards
		if a.closed {
			err = a.closedErrLocked()
		}
		a.mu.Unlock()
		return idforge.Segment{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.set.LoadTimeout)
	a.stopLoad = cancel
	a.mu.Unlock()

	seg, _, took, err := a.claim(ctx, cancel, n)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopLoad = nil
	if errors.Is(err, idforge.ErrRetired) {
		a.retireLocked(err)
		return idforge.Segment{}, err
	}
	if err == nil {
		err = a.checkSegmentLocked(seg)
	}
	if a.set.OnClaim != nil {
		a.set.OnClaim(a.key, took, err)
	}
	if err != nil {
		a.failures++
		a.lastErr = err
		a.lastFail, a.failedAt = err.Error(), a.set.Clock.Now()
		if a.failures == 1 {
			a.set.Logger.Warn("segment claim failed (global order: the calls it served fail, nothing is buffered)", "key", a.key, "err", err)
		}
		return idforge.Segment{}, a.wrapLocked(err)
	}
	if a.failures > 0 {
		a.set.Logger.Info("segment store recovered", "key", a.key, "failed_claims", a.failures)
	}
	a.failures, a.lastErr = 0, nil
	a.highWater, a.lastStep = seg.End, seg.Len()
	a.loads++
	a.issued += seg.Len()
	return seg, nil
}
