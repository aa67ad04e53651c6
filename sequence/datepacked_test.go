package sequence_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/sequence"
)

var shanghai = mustZone("Asia/Shanghai")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// The Redis order-number scheme's own example: 2025-04-13 12:00:00 and
// count 1, 14 bits.
func TestPackingVector(t *testing.T) {
	k := sequence.Packing{Period: sequence.Second, Bits: 14, Location: shanghai}
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, shanghai)
	id, err := k.Pack(at, 1)
	if err != nil || id != 250413120000<<14|1 {
		t.Fatalf("Pack = %d, %v; want %d", id, err, int64(250413120000<<14|1))
	}
	start, n, err := k.Unpack(id)
	if err != nil || !start.Equal(at) || n != 1 || start.Location() != shanghai {
		t.Fatalf("Unpack(%d) = %s, %d, %v", id, start, n, err)
	}
	if k.Cap() != 16383 || sequence.MaxPackedBits(sequence.Second) != 23 || sequence.MaxPackedBits(sequence.Month) != 49 {
		t.Fatalf("cap %d, max bits %d and %d", k.Cap(), sequence.MaxPackedBits(sequence.Second), sequence.MaxPackedBits(sequence.Month))
	}
	for _, tc := range []struct {
		at time.Time
		n  int64
		is error
	}{
		{at, 0, idforge.ErrInvalidArgument},
		{at, 16384, idforge.ErrInvalidArgument},
		{time.Date(2100, 1, 1, 0, 0, 0, 0, shanghai), 1, idforge.ErrLayoutExpired},
		{time.Date(1999, 12, 31, 23, 59, 59, 0, shanghai), 1, idforge.ErrLayoutExpired},
	} {
		if _, err := k.Pack(tc.at, tc.n); !errors.Is(err, tc.is) {
			t.Errorf("Pack(%s, %d): %v, want %v", tc.at, tc.n, err, tc.is)
		}
	}
	for _, id := range []int64{0, -1, 250413120000 << 14, 251313120000<<14 | 1, 250431120000<<14 | 1, 250413240000<<14 | 1, 1<<63 - 1} {
		if _, _, err := k.Unpack(id); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Unpack(%d): %v, want ErrInvalidArgument", id, err)
		}
	}
	for _, bad := range []sequence.Packing{{Period: sequence.Second, Bits: 24, Location: time.UTC}, {Period: sequence.Day, Bits: 0, Location: time.UTC}, {Period: sequence.Second, Bits: 14}} {
		if err := bad.Validate(); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Validate(%+v): %v", bad, err)
		}
	}
}

// packProperty checks, for a random period of the century and count,
// that Unpack(Pack(x)) == x, and that numbers order as (period, count).
func packProperty(t *testing.T, r *rand.Rand, p sequence.Period, bits int, loc *time.Location) {
	k := sequence.Packing{Period: p, Bits: bits, Location: loc}
	point := func() (time.Time, int64) {
		at := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Add(time.Duration(r.Int64N(int64(99 * 365 * 24 * time.Hour))))
		return p.Start(at, loc), 1 + r.Int64N(k.Cap())
	}
	a, an := point()
	b, bn := point()
	ida, err := k.Pack(a, an)
	if err != nil {
		t.Fatalf("Pack(%s, %d): %v", a, an, err)
	}
	idb, _ := k.Pack(b, bn)
	start, n, err := k.Unpack(ida)
	if err != nil || !start.Equal(a) || n != an {
		t.Fatalf("%+v: Unpack(Pack(%s, %d)) = %s, %d, %v", k, a, an, start, n, err)
	}
	if before := a.Before(b) || a.Equal(b) && an < bn; before != (ida < idb) || (ida == idb) != (a.Equal(b) && an == bn) {
		t.Fatalf("%+v: (%s, %d) → %d and (%s, %d) → %d order differently", k, a, an, ida, b, bn, idb)
	}
}

func TestPackingProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		p := sequence.Period(1 + r.IntN(5))
		loc := []*time.Location{time.UTC, shanghai}[r.IntN(2)]
		packProperty(t, r, p, 1+r.IntN(sequence.MaxPackedBits(p)), loc)
	}
}

// Whatever number Unpack accepts, Pack makes again: explain(make(x)) == x
// for the numbers, as the property test checks it for the periods.
func FuzzUnpack(f *testing.F) {
	for _, id := range []int64{250413120000<<14 | 1, 991231235959<<23 | 1<<23 - 1, 1, 0, -1, 1<<63 - 1, 9912<<49 | 5} {
		f.Add(id, uint8(1), uint8(14))
		f.Add(id, uint8(5), uint8(49))
	}
	f.Fuzz(func(t *testing.T, id int64, period, bits uint8) {
		k := sequence.Packing{Period: sequence.Period(1 + period%5), Bits: int(bits), Location: shanghai}
		if k.Validate() != nil {
			return
		}
		start, n, err := k.Unpack(id)
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("Unpack(%d): %v", id, err)
			}
			return
		}
		if back, err := k.Pack(start, n); err != nil || back != id {
			t.Fatalf("%+v: Pack(Unpack(%d) = %s, %d) = %d, %v", k, id, start, n, back, err)
		}
	})
}

// A date-packed source over a counter of 2 bits (3 a second) issues
// across a second boundary and over the cap on a fake clock: waiting for
// the next second as over_cap=wait says, refusing as over_cap=refuse
// says, never one number twice.
func TestDatePackedAcrossSecondsAndCap(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2025, 4, 13, 12, 0, 0, 900_000_000, shanghai)
	stamp := func(t time.Time) int64 { return sequence.Second.Stamp(t, shanghai) % 1e12 }
	for _, over := range []sequence.OverCap{sequence.OverCapWait, sequence.OverCapRefuse} {
		clk := fakeclock.New(at)
		c, err := sequence.NewCounter(ctx, newMemStore(), sequence.CounterSettings{
			Name: "orders", Period: sequence.Second, Location: shanghai, Cap: 3, OverCap: over, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		d, err := sequence.NewDatePacked(c, 2)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for range 3 {
			id, err := d.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		id, err := d.Next(ctx) // the fourth of 12:00:00
		if over == sequence.OverCapRefuse {
			if !errors.Is(err, sequence.ErrCapReached) || !errors.Is(err, idforge.ErrUnavailable) {
				t.Fatalf("over the cap, refusing: %d, %v", id, err)
			}
			d.Close()
			continue
		}
		if err != nil {
			t.Fatalf("over the cap, waiting: %v", err)
		}
		got = append(got, id)
		if slept, _ := clk.Slept(); slept <= 0 || slept > 100*time.Millisecond+time.Millisecond {
			t.Fatalf("waited %v for the next second", slept)
		}
		clk.Add(1500 * time.Millisecond) // across another boundary: 12:00:02
		id, err = d.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
		s0, s1, s2 := stamp(at), stamp(at.Add(time.Second)), stamp(at.Add(2*time.Second))
		want := []int64{s0<<2 | 1, s0<<2 | 2, s0<<2 | 3, s1<<2 | 1, s2<<2 | 1}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("number %d is %d, want %d (all: %v)", i, got[i], want[i], got)
			}
		}
		start, n, err := d.Packing().Unpack(got[3])
		if err != nil || !start.Equal(time.Date(2025, 4, 13, 12, 0, 1, 0, shanghai)) || n != 1 {
			t.Fatalf("Unpack(%d) = %s, %d, %v", got[3], start, n, err)
		}
		d.Close()
	}
}

// A counter whose cap does not fit the bits, or has none, is refused: a
// count past 2^bits − 1 would run into the date.
func TestDatePackedRefusesCaps(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		cap  int64
		bits int
	}{{0, 14}, {16384, 14}, {100, 24}} {
		c, err := sequence.NewCounter(ctx, newMemStore(), sequence.CounterSettings{Name: "o", Period: sequence.Second, Cap: tc.cap})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sequence.NewDatePacked(c, tc.bits); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("cap %d, %d bits: %v, want ErrInvalidArgument", tc.cap, tc.bits, err)
		}
		c.Close()
	}
	for _, u := range []string{
		"sqlite:///tmp/x.db?period=second",              // no tz
		"sqlite:///tmp/x.db?period=fortnight&tz=UTC",    // no such period
		"sqlite:///tmp/x.db?period=second&tz=Mars/Base", // no such zone
	} {
		if _, err := sequence.ParsePacking(u, 14); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("ParsePacking(%q): %v", u, err)
		}
	}
}

// OpenDatePacked over a real SQLite counter takes the cap from the bits
// when the URL gives none, and refuses one that does not fit.
func TestOpenDatePacked(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "counters.db")
	d, err := sequence.OpenDatePacked(ctx, "sqlite://"+db+"?name=orders&period=second&tz=Asia/Shanghai", 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 7 {
		id, err := d.Next(ctx)
		if err != nil || seen[id] {
			t.Fatalf("Next: %d, %v (seen %v)", id, err, seen[id])
		}
		seen[id] = true
		if _, n, err := d.Packing().Unpack(id); err != nil || n < 1 || n > 7 {
			t.Fatalf("Unpack(%d): count %d, %v", id, n, err)
		}
	}
	d.Close()
	if _, err := sequence.OpenDatePacked(ctx, "sqlite://"+db+"?name=orders&period=second&tz=UTC&cap=8", 3); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("cap 8 for 3 bits: %v", err)
	}
}
