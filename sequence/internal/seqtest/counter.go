package seqtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/sequence"
)

// T0 is the fake clock's start in the counter suite: half a second into
// 2025-04-13 12:00:00 UTC.
var T0 = time.Date(2025, 4, 13, 12, 0, 0, 500_000_000, time.UTC)

// Issued is one number of a counter with its period.
type Issued struct {
	Period time.Time // the period's first instant
	N      int64     // the number in it
}

// CounterSuite runs the conformance tests of a counter store against its
// real service. open must return a new, independent client of one shared
// backing store on each call, as another process would open it; the suite
// closes the stores it opens when they implement io.Closer. wipe, when
// not nil, erases everything the backing store holds about a counter
// name, as a store that lost its data would.
func CounterSuite(t *testing.T, open func(tb testing.TB) sequence.CounterStore, wipe func(tb testing.TB, name string)) {
	ctx := context.Background()
	type setup struct {
		name  string
		clock *fakeclock.Clock
	}
	fresh := func(t *testing.T) setup {
		var b [6]byte
		rand.Read(b[:])
		return setup{name: "c-" + hex.EncodeToString(b[:]), clock: fakeclock.New(T0)}
	}
	// counter opens a counter on a store client of its own.
	counter := func(t *testing.T, s sequence.CounterSettings) *sequence.Counter {
		t.Helper()
		st := open(t)
		if c, ok := st.(io.Closer); ok {
			t.Cleanup(func() { c.Close() })
		}
		c, err := sequence.NewCounter(ctx, st, s)
		if err != nil {
			t.Fatalf("NewCounter: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	next := func(t *testing.T, c *sequence.Counter, want time.Time, wantN int64) {
		t.Helper()
		n, p, err := c.Next(ctx, time.Time{})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if !p.Equal(want) || (wantN != 0 && n != wantN) {
			t.Fatalf("Next = %d in %s, want %d in %s", n, p.Format(time.RFC3339), wantN, want.Format(time.RFC3339))
		}
	}
	p0 := T0.Truncate(time.Second)

	t.Run("Rollover", func(t *testing.T) {
		su := fresh(t)
		c := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Clock: su.clock})
		for i := int64(1); i <= 3; i++ {
			next(t, c, p0, i)
		}
		su.clock.Add(499 * time.Millisecond) // 12:00:00.999
		next(t, c, p0, 4)
		su.clock.Add(time.Millisecond) // 12:00:01.000
		next(t, c, p0.Add(time.Second), 1)
		next(t, c, p0.Add(time.Second), 2)
		su.clock.Add(time.Minute)
		next(t, c, p0.Add(61*time.Second), 1)
	})

	t.Run("CapRefuse", func(t *testing.T) {
		su := fresh(t)
		c := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Cap: 3, OverCap: sequence.OverCapRefuse, Clock: su.clock})
		for i := int64(1); i <= 3; i++ {
			next(t, c, p0, i)
		}
		for range 2 {
			_, _, err := c.Next(ctx, time.Time{})
			if !errors.Is(err, sequence.ErrCapReached) || !errors.Is(err, idforge.ErrUnavailable) {
				t.Fatalf("Next over the cap: %v, want ErrCapReached and ErrUnavailable", err)
			}
		}
		su.clock.Add(time.Second)
		next(t, c, p0.Add(time.Second), 1)
	})

	t.Run("CapWait", func(t *testing.T) {
		su := fresh(t)
		c := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Cap: 3, Clock: su.clock})
		for i := int64(1); i <= 3; i++ {
			next(t, c, p0, i)
		}
		next(t, c, p0.Add(time.Second), 1) // waited for the next second
		if now := su.clock.Now(); now.Before(p0.Add(time.Second)) {
			t.Fatalf("returned a number of %s at %s, before it began", p0.Add(time.Second), now)
		}
		next(t, c, p0.Add(time.Second), 2)
		next(t, c, p0.Add(time.Second), 3)
		// A deadline before the next period fails at once.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond) // the next period is 1 s away
		defer cancel()
		_, _, err := c.Next(short, time.Time{})
		if !errors.Is(err, sequence.ErrCapReached) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next with a short deadline: %v, want ErrCapReached and DeadlineExceeded", err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		su := fresh(t)
		const instances, workers, per, capN = 4, 6, 20, 40
		var cs []*sequence.Counter
		for range instances {
			cs = append(cs, counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Cap: capN,
				Clock: su.clock, Dir: t.TempDir()}))
		}
		got := RunCounters(t, cs, workers, per)
		if len(got) != instances*workers*per {
			t.Fatalf("%d numbers, want %d", len(got), instances*workers*per)
		}
		UniqueIssued(t, got, capN)
	})

	for _, over := range []sequence.OverCap{sequence.OverCapRefuse, sequence.OverCapWait} {
		t.Run("ClockBackOneHour/"+over.String(), func(t *testing.T) {
			su := fresh(t)
			c := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Cap: 5, OverCap: over, Clock: su.clock})
			var got []Issued
			take := func() error {
				n, p, err := c.Next(ctx, time.Time{})
				if err == nil {
					got = append(got, Issued{p, n})
				}
				return err
			}
			for range 2 {
				if err := take(); err != nil {
					t.Fatal(err)
				}
			}
			su.clock.Add(-time.Hour)
			// Behind the last period: keep counting in it while it has room.
			for i := 3; i <= 5; i++ {
				if err := take(); err != nil {
					t.Fatal(err)
				}
				if last := got[len(got)-1]; !last.Period.Equal(p0) || last.N != int64(i) {
					t.Fatalf("after the clock went back: %d in %s, want %d in %s", last.N, last.Period, i, p0)
				}
			}
			err := take()
			switch over {
			case sequence.OverCapRefuse:
				if !errors.Is(err, sequence.ErrCapReached) {
					t.Fatalf("full last period, clock behind: %v, want ErrCapReached", err)
				}
			case sequence.OverCapWait:
				if err != nil {
					t.Fatal(err)
				}
				if last := got[len(got)-1]; !last.Period.Equal(p0.Add(time.Second)) || last.N != 1 {
					t.Fatalf("after waiting: %d in %s, want 1 in %s", last.N, last.Period, p0.Add(time.Second))
				}
				if su.clock.Now().Before(p0.Add(time.Second)) {
					t.Fatalf("issued in %s while the clock reads %s", p0.Add(time.Second), su.clock.Now())
				}
			}
			UniqueIssued(t, got, 5)
			// A new instance, its clock still behind, starts above the mark too.
			c2 := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Cap: 5, OverCap: over, Clock: fakeclock.New(T0.Add(-time.Hour))})
			if m := c2.Mark(); m.Less(c.Mark()) {
				t.Fatalf("a new instance recovered mark %v, below %v", m, c.Mark())
			}
		})
	}

	t.Run("CrashRestart", func(t *testing.T) {
		su := fresh(t)
		dir := t.TempDir()
		s := sequence.CounterSettings{Name: su.name, Period: sequence.Day, Clock: su.clock, Dir: dir}
		c1 := counter(t, s)
		var last int64
		for range 10 {
			n, _, err := c1.Next(ctx, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			last = n
		}
		// c1 is dropped without Close, as a crashed process would be.
		c2 := counter(t, s)
		n, p, err := c2.Next(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Equal(time.Date(2025, 4, 13, 0, 0, 0, 0, time.UTC)) || n <= last {
			t.Fatalf("after a crash: %d in %s, want above %d on 2025-04-13", n, p, last)
		}
	})

	t.Run("CleanRestart", func(t *testing.T) {
		su := fresh(t)
		s := sequence.CounterSettings{Name: su.name, Period: sequence.Minute, Clock: su.clock, Dir: t.TempDir()}
		c1 := counter(t, s)
		for i := int64(1); i <= 5; i++ {
			next(t, c1, T0.Truncate(time.Minute), i)
		}
		if err := c1.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c1.Next(ctx, time.Time{}); !errors.Is(err, idforge.ErrClosed) {
			t.Fatalf("Next after Close: %v, want ErrClosed", err)
		}
		c2 := counter(t, s)
		next(t, c2, T0.Truncate(time.Minute), 6) // no gap after a clean stop
	})

	t.Run("RestartWithoutFile", func(t *testing.T) {
		su := fresh(t)
		s := sequence.CounterSettings{Name: su.name, Period: sequence.Hour, Clock: su.clock}
		c1 := counter(t, s)
		for i := int64(1); i <= 4; i++ {
			next(t, c1, T0.Truncate(time.Hour), i)
		}
		su.clock.Add(-2 * time.Hour)
		c2 := counter(t, s) // recovers from the store alone, clock behind
		next(t, c2, T0.Truncate(time.Hour), 5)
	})

	if wipe != nil {
		t.Run("StoreLostFileKept", func(t *testing.T) {
			su := fresh(t)
			s := sequence.CounterSettings{Name: su.name, Period: sequence.Day, Clock: su.clock, Dir: t.TempDir(), FileAhead: 3}
			c1 := counter(t, s)
			var last int64
			for range 7 {
				n, _, err := c1.Next(ctx, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				last = n
			}
			wipe(t, su.name)
			c2 := counter(t, s)
			n, _, err := c2.Next(ctx, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if n <= last {
				t.Fatalf("store wiped, file kept: %d, want above %d", n, last)
			}
		})
	}

	t.Run("OtherPeriod", func(t *testing.T) {
		su := fresh(t)
		c := counter(t, sequence.CounterSettings{Name: su.name, Period: sequence.Second, Clock: su.clock})
		next(t, c, p0, 1)
		st := open(t)
		if cl, ok := st.(io.Closer); ok {
			defer cl.Close()
		}
		_, err := sequence.NewCounter(ctx, st, sequence.CounterSettings{Name: su.name, Period: sequence.Day})
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Fatalf("reopening a second counter as a day counter: %v, want ErrInvalidArgument", err)
		}
	})
}

// RunCounters calls Next(ctx, zero time) per times from workers goroutines
// on each counter and returns every number; errors fail tb on its own
// goroutine.
func RunCounters(tb testing.TB, cs []*sequence.Counter, workers, per int) []Issued {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results := make(chan []Issued, len(cs)*workers)
	errs := make(chan error, len(cs)*workers)
	var wg sync.WaitGroup
	for i, c := range cs {
		for w := range workers {
			wg.Go(func() {
				var got []Issued
				for range per {
					n, p, err := c.Next(ctx, time.Time{})
					if err != nil {
						errs <- fmt.Errorf("counter %d, goroutine %d: %w", i, w, err)
						break
					}
					got = append(got, Issued{p, n})
				}
				results <- got
			})
		}
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
	var all []Issued
	for r := range results {
		all = append(all, r...)
	}
	return all
}

// UniqueIssued fails tb when a (period, number) pair repeats, a number is
// below 1 or, with capN > 0, above capN.
func UniqueIssued(tb testing.TB, got []Issued, capN int64) {
	tb.Helper()
	seen := map[Issued]bool{}
	bad := 0
	for _, g := range got {
		k := Issued{g.Period.UTC(), g.N}
		switch {
		case seen[k]:
			tb.Errorf("%d in %s issued twice", g.N, g.Period)
		case g.N < 1 || capN > 0 && g.N > capN:
			tb.Errorf("%d in %s is outside [1, %d]", g.N, g.Period, capN)
		default:
			seen[k] = true
			continue
		}
		if bad++; bad > 10 {
			tb.FailNow()
		}
	}
}
