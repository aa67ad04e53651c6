package snowflake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

func TestNewValidation(t *testing.T) {
	twitter := mustPreset(t, "twitter")
	sony := mustPreset(t, "sonyflake")
	short := mustParse(t, "time:20,worker:30,sequence:13,unit=1s,epoch=2024-01-01T00:00:00Z") // 2^20 s ≈ 12 days
	future := twitter
	future.Epoch = start.Truncate(time.Millisecond).Add(time.Millisecond)
	bad := twitter
	bad.Fields = bad.Fields[1:]
	tests := []struct {
		name string
		s    Settings
		now  time.Time
		want error
		msg  []string
	}{
		{"defaults to twitter", Settings{}, start, nil, nil},
		{"invalid layout", Settings{Layout: bad}, start, idforge.ErrInvalidLayout, []string{"no time field"}},
		{"epoch in the future", Settings{Layout: future}, start, idforge.ErrInvalidLayout, []string{"epoch 2024-06-01T12:00:00.001Z is in the future"}},
		{"epoch is now", Settings{Layout: func() Layout { l := twitter; l.Epoch = start.Truncate(time.Millisecond); return l }()}, start, nil, nil},
		{"worker too big", Settings{Worker: 32}, start, idforge.ErrInvalidWorker, []string{"worker 32 out of range 0..31"}},
		{"worker negative", Settings{Worker: -1}, start, idforge.ErrInvalidWorker, []string{"worker -1 out of range 0..31"}},
		{"datacenter too big", Settings{Datacenter: 40}, start, idforge.ErrInvalidWorker, []string{"datacenter 40 out of range 0..31"}},
		{"no datacenter field", Settings{Layout: sony, Datacenter: 1}, start, idforge.ErrInvalidWorker, []string{"layout has no datacenter field"}},
		{"sonyflake worker max", Settings{Layout: sony, Worker: 65535}, start, nil, nil},
		{"sonyflake worker too big", Settings{Layout: sony, Worker: 65536}, start, idforge.ErrInvalidWorker, []string{"0..65535"}},
		{"expired", Settings{Layout: twitter}, twitter.Expires(), idforge.ErrLayoutExpired, []string{"ran out of time on 2080-07-10T17:30:30Z"}},
		{"expired short layout", Settings{Layout: short}, short.Expires().Add(time.Hour), idforge.ErrLayoutExpired, []string{short.Expires().Format(time.RFC3339)}},
		{"negative FenceAhead", Settings{FenceAhead: -time.Second}, start, idforge.ErrInvalidArgument, []string{"FenceAhead -1s is negative"}},
		{"fence load fails", Settings{Fence: &memFence{loadErr: errDisk}}, start, errDisk, []string{"loading the time fence"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Clock = fakeclock.New(tc.now)
			tc.s.Logger = discard
			g, err := New(tc.s)
			wantErr(t, err, tc.want, tc.msg...)
			if err == nil {
				if g == nil {
					t.Fatal("nil generator without an error")
				}
				mustNext(t, g)
				g.Close()
			}
		})
	}
}

var errDisk = errors.New("disk on fire")

func TestNewLogs(t *testing.T) {
	short := mustParse(t, "time:20,worker:30,sequence:13,unit=1s,epoch=2024-01-01T00:00:00Z")
	tests := []struct {
		name   string
		layout Layout
		now    time.Time
		warn   bool
	}{
		{"far from expiry", mustPreset(t, "twitter"), start, false},
		{"within a year of expiry", short, short.Expires().Add(-24 * time.Hour), true},
		{"twitter in 2080", mustPreset(t, "twitter"), time.Date(2080, 1, 1, 0, 0, 0, 0, time.UTC), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			g := newGen(t, Settings{Layout: tc.layout, Worker: 3, Clock: fakeclock.New(tc.now),
				Logger: slog.New(slog.NewTextHandler(&buf, nil))})
			mustNext(t, g)
			out := buf.String()
			exp := tc.layout.Expires().Format(time.RFC3339)
			if !strings.Contains(out, "level=INFO") || !strings.Contains(out, "snowflake generator started") ||
				!strings.Contains(out, "worker=3") || !strings.Contains(out, "expires="+exp) {
				t.Errorf("no start-up line with worker and expiry in:\n%s", out)
			}
			if got := strings.Contains(out, "level=WARN") && strings.Contains(out, "runs out of time soon"); got != tc.warn {
				t.Errorf("expiry warning = %v, want %v; log:\n%s", got, tc.warn, out)
			}
		})
	}
}

func TestGeneratorAccessors(t *testing.T) {
	l := mustPreset(t, "twitter")
	g := newGen(t, Settings{Layout: l, Worker: 7, Datacenter: 3, Clock: fakeclock.New(start)})
	if g.Worker() != 7 || g.Datacenter() != 3 {
		t.Errorf("Worker, Datacenter = %d, %d", g.Worker(), g.Datacenter())
	}
	got := g.Layout()
	if !got.Equal(l) || got.Name != "twitter" {
		t.Errorf("Layout() = %s", got)
	}
	got.Fields[0].Bits = 1 // must not reach the generator
	if g.Layout().Fields[0].Bits != 41 {
		t.Error("Layout() shares its Fields with the generator")
	}
	p := mustExplain(t, l, mustNext(t, g))
	if p.Worker != 7 || p.Datacenter != 3 || p.Sequence != 0 || !p.Time.Equal(start.Truncate(time.Millisecond)) {
		t.Errorf("first ID decodes to %+v", p)
	}
}

// TestSequenceExhaustion issues PerTick()+1 IDs at one fake instant: the
// last one must be in the next tick, reached by sleeping.
func TestSequenceExhaustion(t *testing.T) {
	for _, name := range []string{"twitter", "sonyflake", "vesta-min-granularity", "js-safe"} {
		t.Run(name, func(t *testing.T) {
			l := mustPreset(t, name)
			g, clk := newFake(t, l)
			n := int(l.PerTick())
			var prev int64 = -1
			first := mustExplain(t, l, mustNext(t, g))
			for i := 1; i <= n; i++ {
				id := mustNext(t, g)
				if id <= prev {
					t.Fatalf("ID %d not above %d", id, prev)
				}
				prev = id
				p := mustExplain(t, l, id)
				wantTick, wantSeq := first.Ticks, int64(i)
				if i == n {
					wantTick, wantSeq = first.Ticks+1, 0
				}
				if p.Ticks != wantTick || p.Sequence != wantSeq {
					t.Fatalf("ID %d: tick %d seq %d, want tick %d seq %d", i, p.Ticks, p.Sequence, wantTick, wantSeq)
				}
			}
			slept, _ := clk.Slept()
			wantSleep := first.Time.Add(l.Unit).Sub(start)
			if slept != wantSleep {
				t.Errorf("slept %v, want %v (to the start of the next tick)", slept, wantSleep)
			}
		})
	}
}

func TestNextN(t *testing.T) {
	l := mustPreset(t, "twitter")
	g, clk := newFake(t, l)
	ids, err := g.NextN(context.Background(), 10000) // 2.4 ticks
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 10000 {
		t.Fatalf("got %d IDs", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids[%d] = %d not above %d", i, ids[i], ids[i-1])
		}
	}
	last := mustExplain(t, l, ids[len(ids)-1])
	if first := mustExplain(t, l, ids[0]); last.Ticks != first.Ticks+2 || last.Sequence != 10000-2*4096-1 {
		t.Errorf("last ID: tick +%d seq %d", last.Ticks-first.Ticks, last.Sequence)
	}
	if _, sleeps := clk.Slept(); sleeps != 2 {
		t.Errorf("%d sleeps, want 2", sleeps)
	}
	if next := mustNext(t, g); next <= ids[len(ids)-1] {
		t.Errorf("Next after NextN went back")
	}
	for _, n := range []int{0, -1, MaxBatch + 1} {
		_, err := g.NextN(context.Background(), n)
		wantErr(t, err, idforge.ErrInvalidCount, fmt.Sprint(n))
	}
}

func TestClockBackwards(t *testing.T) {
	l := mustPreset(t, "twitter")

	t.Run("small step waits", func(t *testing.T) {
		g, clk := newFake(t, l)
		a := mustNext(t, g)
		clk.Add(-3 * time.Millisecond)
		before, _ := clk.Slept()
		b := mustNext(t, g)
		if b <= a {
			t.Fatalf("ID %d after %d", b, a)
		}
		slept, _ := clk.Slept()
		if d := slept - before; d < 2*time.Millisecond || d > 3*time.Millisecond {
			t.Errorf("waited %v for a 3ms step back", d)
		}
		ids, err := g.NextN(context.Background(), 5000)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{a: true, b: true}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate %d", id)
			}
			seen[id] = true
		}
	})

	t.Run("large step refuses then recovers", func(t *testing.T) {
		g, clk := newFake(t, l)
		a := mustNext(t, g)
		clk.Add(-1200 * time.Millisecond)
		_, err := g.Next(context.Background())
		wantErr(t, err, idforge.ErrClockMovedBackwards, "by 1.1995s", "now 2024-06-01T11:59:58.8005Z", "last issued 2024-06-01T12:00:00Z", "refusing to issue, waits up to 5ms")
		_, err = g.NextN(context.Background(), 3)
		wantErr(t, err, idforge.ErrClockMovedBackwards)
		if slept, _ := clk.Slept(); slept != 0 {
			t.Errorf("slept %v on a step beyond MaxBackwardWait", slept)
		}
		if waits, refusals := g.ClockBackwards(); waits != 0 || refusals != 2 {
			t.Errorf("ClockBackwards() = %d waits, %d refusals; want 0, 2", waits, refusals)
		}
		clk.Add(1200 * time.Millisecond)
		b := mustNext(t, g)
		if b <= a {
			t.Fatalf("after recovery ID %d not above %d", b, a)
		}
	})

	t.Run("never wait", func(t *testing.T) {
		clk := fakeclock.New(start)
		g := newGen(t, Settings{Layout: l, Clock: clk, MaxBackwardWait: -1})
		mustNext(t, g)
		clk.Add(-time.Millisecond)
		_, err := g.Next(context.Background())
		wantErr(t, err, idforge.ErrClockMovedBackwards, "never waits")
	})

	t.Run("custom tolerance", func(t *testing.T) {
		clk := fakeclock.New(start)
		g := newGen(t, Settings{Layout: l, Clock: clk, MaxBackwardWait: time.Second})
		a := mustNext(t, g)
		clk.Add(-900 * time.Millisecond)
		if b := mustNext(t, g); b <= a {
			t.Fatalf("ID %d after %d", b, a)
		}
		if waits, refusals := g.ClockBackwards(); waits != 1 || refusals != 0 {
			t.Errorf("ClockBackwards() = %d waits, %d refusals; want 1, 0", waits, refusals)
		}
	})

	t.Run("clock before epoch", func(t *testing.T) {
		clk := fakeclock.New(start)
		ll := l
		ll.Epoch = start.Truncate(time.Millisecond)
		g := newGen(t, Settings{Layout: ll, Clock: clk})
		clk.Add(-time.Hour)
		_, err := g.Next(context.Background())
		wantErr(t, err, idforge.ErrClockMovedBackwards, "before the layout's epoch")
	})
}

// TestContext checks that a wait for the next tick gives up when the
// context is done.
func TestContext(t *testing.T) {
	l := mustParse(t, "time:40,worker:22,sequence:1,unit=1s,epoch=2024-01-01T00:00:00Z")

	t.Run("fake clock, cancelled", func(t *testing.T) {
		g, clk := newFake(t, l)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		mustNext(t, g)
		mustNext(t, g) // the sequence (2 per tick) is used up
		_, err := g.Next(ctx)
		wantErr(t, err, context.Canceled)
		if slept, _ := clk.Slept(); slept != 0 {
			t.Errorf("slept %v with a cancelled context", slept)
		}
		mustNext(t, g) // still usable
	})

	t.Run("system clock, deadline", func(t *testing.T) {
		g := newGen(t, Settings{Layout: l})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var err error
		// 2 IDs a second: a wait comes by the 3rd or 5th, and only the
		// deadline ends it with an error (5 IDs take at least 2 s).
		for i := 0; i < 5 && err == nil; i++ {
			_, err = g.Next(ctx)
		}
		wantErr(t, err, context.DeadlineExceeded)
	})
}

func TestExpiresWhileRunning(t *testing.T) {
	l := mustParse(t, "time:20,worker:30,sequence:13,unit=1s,epoch=2024-01-01T00:00:00Z")
	end := l.Expires()
	clk := fakeclock.New(end.Add(-500 * time.Millisecond))
	g := newGen(t, Settings{Layout: l, Clock: clk})

	// The last tick: issue its whole sequence, then the next ID would need
	// a tick the time field cannot hold.
	ids, err := g.NextN(context.Background(), int(l.PerTick()))
	if err != nil {
		t.Fatal(err)
	}
	if p := mustExplain(t, l, ids[len(ids)-1]); p.Ticks != 1<<20-1 {
		t.Fatalf("last ID in tick %d, want the last one, %d", p.Ticks, 1<<20-1)
	}
	_, err = g.Next(context.Background())
	wantErr(t, err, idforge.ErrLayoutExpired, end.Format(time.RFC3339))
	clk.Add(time.Hour)
	_, err = g.Next(context.Background())
	wantErr(t, err, idforge.ErrLayoutExpired)
}

func TestClose(t *testing.T) {
	g, _ := newFake(t, mustPreset(t, "twitter"))
	mustNext(t, g)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := g.Next(context.Background())
	wantErr(t, err, idforge.ErrClosed)
	_, err = g.NextN(context.Background(), 2)
	wantErr(t, err, idforge.ErrClosed)
}

// TestConcurrent has 16 goroutines share one generator: every ID is
// unique, and each goroutine sees its IDs strictly increase.
func TestConcurrent(t *testing.T) {
	const goroutines, perG = 16, 3000
	tests := []struct {
		name  string
		clock idforge.Clock
		batch int
	}{
		{"system clock", nil, 1},
		{"system clock, batches", nil, 37},
		{"fake clock", fakeclock.New(start), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustPreset(t, "twitter")
			g := newGen(t, Settings{Layout: l, Worker: 5, Datacenter: 2, Clock: tc.clock})
			results := make([][]int64, goroutines)
			errs := make(chan error, goroutines)
			var wg sync.WaitGroup
			for w := 0; w < goroutines; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]int64, 0, perG)
					for len(ids) < perG {
						if tc.batch == 1 {
							id, err := g.Next(context.Background())
							if err != nil {
								errs <- err
								return
							}
							ids = append(ids, id)
							continue
						}
						batch, err := g.NextN(context.Background(), min(tc.batch, perG-len(ids)))
						if err != nil {
							errs <- err
							return
						}
						ids = append(ids, batch...)
					}
					for i := 1; i < len(ids); i++ {
						if ids[i] <= ids[i-1] {
							errs <- fmt.Errorf("goroutine %d: ID %d after %d", w, ids[i], ids[i-1])
							return
						}
					}
					results[w] = ids
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			seen := make(map[int64]struct{}, goroutines*perG)
			for _, ids := range results {
				for _, id := range ids {
					if _, dup := seen[id]; dup {
						t.Fatalf("duplicate ID %d", id)
					}
					seen[id] = struct{}{}
					if p := mustExplain(t, l, id); p.Worker != 5 || p.Datacenter != 2 {
						t.Fatalf("ID %d decodes to %+v", id, p)
					}
				}
			}
			if len(seen) != goroutines*perG {
				t.Fatalf("%d IDs, want %d", len(seen), goroutines*perG)
			}
		})
	}
}

// TestTwoWorkers checks that two generators with different worker IDs
// on the same clock never collide, and their IDs are k-sorted by time.
func TestTwoWorkers(t *testing.T) {
	l := mustPreset(t, "sonyflake")
	clk := fakeclock.New(start)
	a := newGen(t, Settings{Layout: l, Worker: 1, Clock: clk})
	b := newGen(t, Settings{Layout: l, Worker: 2, Clock: clk})
	seen := map[int64]bool{}
	for i := 0; i < 2000; i++ {
		for _, g := range []*Generator{a, b} {
			id := mustNext(t, g)
			if seen[id] {
				t.Fatalf("duplicate %d", id)
			}
			seen[id] = true
		}
	}
}

func TestIssuedCounts(t *testing.T) {
	g, _ := newFake(t, mustPreset(t, "twitter"))
	for range 5 {
		mustNext(t, g)
	}
	if _, err := g.NextN(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if n := g.Issued(); n != 15 {
		t.Fatalf("Issued = %d, want 15", n)
	}
}

// guardUntil is a Guard with a settable ValidUntil.
type guardUntil struct{ until time.Time }

func (g *guardUntil) ValidUntil() time.Time { return g.until }

func TestGuardStopsIssuingWhenTheLeaseEnds(t *testing.T) {
	clk := fakeclock.New(start)
	guard := &guardUntil{until: start.Add(time.Second)}
	g := newGen(t, Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: clk, Guard: guard})
	mustNext(t, g)
	clk.Add(999 * time.Millisecond)
	mustNext(t, g)
	clk.Add(time.Millisecond) // the lease's end
	if _, err := g.Next(context.Background()); !errors.Is(err, idforge.ErrLeaseLost) {
		t.Fatalf("Next at ValidUntil: %v, want ErrLeaseLost", err)
	}
	if _, err := g.NextN(context.Background(), 3); !errors.Is(err, idforge.ErrLeaseLost) {
		t.Fatalf("NextN at ValidUntil: %v, want ErrLeaseLost", err)
	}
	// Renewed: issuing resumes.
	guard.until = start.Add(time.Hour)
	mustNext(t, g)
}

// A lost lease reads as the Unix epoch (the zero Time would mean "no
// limit"): issuing stops and the error says the ID was lost, not that it
// was valid until 1970.
func TestGuardLostLease(t *testing.T) {
	clk := fakeclock.New(start)
	guard := &guardUntil{until: start.Add(time.Hour)}
	g := newGen(t, Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: clk, Guard: guard})
	mustNext(t, g)
	guard.until = time.Unix(0, 0)
	_, err := g.Next(context.Background())
	if !errors.Is(err, idforge.ErrLeaseLost) {
		t.Fatalf("Next after the lease was lost: %v, want ErrLeaseLost", err)
	}
	if msg := err.Error(); strings.Contains(msg, "1970") || !strings.Contains(msg, "no longer held") {
		t.Fatalf("error %q should say the worker ID is no longer held", msg)
	}
}

func TestNotBefore(t *testing.T) {
	clk := fakeclock.New(start)
	// An earlier holder of the worker ID issued until 500 ms from now: wait.
	g := newGen(t, Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: clk, NotBefore: start.Add(500 * time.Millisecond)})
	id := mustNext(t, g)
	p, _ := g.Layout().Explain(id)
	if !p.Time.After(start.Add(500 * time.Millisecond)) {
		t.Fatalf("first ID at %v, not after NotBefore", p.Time)
	}
	// An hour ahead: refuse.
	_, err := New(Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: fakeclock.New(start), NotBefore: start.Add(time.Hour), Logger: discard})
	if !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("NotBefore an hour ahead: %v, want ErrClockMovedBackwards", err)
	}
}

func TestRebind(t *testing.T) {
	g, clk := newFake(t, mustPreset(t, "twitter"))
	before := mustNext(t, g)
	if got := g.LastIssued(); !got.After(start) {
		t.Fatalf("LastIssued = %v", got)
	}
	if err := g.Rebind(9, clk.Now().Add(200*time.Millisecond), nil); err != nil {
		t.Fatal(err)
	}
	// The earlier holder of worker 9 issued until 200 ms from now: not yet.
	if _, err := g.Next(context.Background()); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("Next before notBefore: %v", err)
	}
	clk.Add(300 * time.Millisecond)
	id := mustNext(t, g)
	p, _ := g.Layout().Explain(id)
	if p.Worker != 9 || id <= before || !p.Time.After(start.Add(200*time.Millisecond)) {
		t.Fatalf("after Rebind: worker %d at %v (id %d after %d)", p.Worker, p.Time, id, before)
	}
	if err := g.Rebind(32, time.Time{}, nil); !errors.Is(err, idforge.ErrInvalidWorker) {
		t.Fatalf("Rebind out of range: %v", err)
	}
}

func TestBorrowAhead(t *testing.T) {
	clk := fakeclock.New(start)
	g := newGen(t, Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: clk, MaxBorrow: 2 * time.Second})
	seen := map[int64]bool{}
	var last int64
	issue := func() error {
		id, err := g.Next(context.Background())
		if err != nil {
			return err
		}
		if seen[id] || id <= last {
			t.Fatalf("ID %d after %d (duplicate %v)", id, last, seen[id])
		}
		seen[id], last = true, id
		return nil
	}
	for range 100 {
		if err := issue(); err != nil {
			t.Fatal(err)
		}
	}
	// 1 s back: borrowing goes on without waiting, 10000 IDs (several
	// ticks' worth of sequence) stay unique and increasing.
	clk.Add(-time.Second)
	slept, _ := clk.Slept()
	for range 10000 {
		if err := issue(); err != nil {
			t.Fatalf("while borrowing: %v", err)
		}
	}
	if now, _ := clk.Slept(); now != slept {
		t.Fatalf("borrowing slept %v", now-slept)
	}
	// 3 s back: beyond the budget, refuse.
	clk.Add(-3 * time.Second)
	if err := issue(); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("3 s back with a 2 s budget: %v", err)
	}
	// Without borrowing, 1 s back refuses.
	clk2 := fakeclock.New(start)
	h := newGen(t, Settings{Layout: mustPreset(t, "twitter"), Worker: 1, Clock: clk2})
	mustNext(t, h)
	clk2.Add(-time.Second)
	if _, err := h.Next(context.Background()); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("1 s back without borrowing: %v", err)
	}
}

// Refusing says what Next would refuse with now, without issuing: a
// clock behind what was issued beyond the allowed wait, and nothing once
// it has caught up.
func TestRefusing(t *testing.T) {
	clk := fakeclock.New(time.Date(2025, 4, 13, 10, 0, 0, 0, time.UTC))
	g, err := New(Settings{Worker: 1, Clock: clk, MaxBackwardWait: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Refusing(); err != nil {
		t.Fatalf("Refusing with the clock on time: %v", err)
	}
	clk.Add(-time.Second)
	if err := g.Refusing(); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("Refusing with the clock 1s behind: %v; want ErrClockMovedBackwards", err)
	}
	if _, err := g.Next(context.Background()); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("Next disagrees with Refusing: %v", err)
	}
	clk.Add(time.Second + time.Millisecond)
	if err := g.Refusing(); err != nil {
		t.Fatalf("Refusing once the clock caught up: %v", err)
	}
}
