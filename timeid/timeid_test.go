package timeid

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/oklog/ulid/v2"
)

// rfcTime is the time of RFC 9562's UUIDv7 test vector (Appendix A.6):
// Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00.
var rfcTime = time.Date(2022, 2, 22, 14, 22, 22, 0, time.FixedZone("GMT-05:00", -5*3600))

// kinds builds one generator of each kind on clock.
func kinds(tb testing.TB, clock idforge.Clock) map[Kind]Generator {
	tb.Helper()
	gs := map[Kind]Generator{}
	for _, k := range []Kind{KindUUIDv7, KindULID} {
		g, err := New(k, Settings{Clock: clock})
		if err != nil {
			tb.Fatalf("New(%s): %v", k, err)
		}
		gs[k] = g
	}
	return gs
}

// checkIncreasing fails unless ids strictly increase, and returns the
// first offending index or -1.
func checkIncreasing(tb testing.TB, what string, ids []string) {
	tb.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			tb.Fatalf("%s: ID %d %s is not above ID %d %s", what, i, ids[i], i-1, ids[i-1])
		}
	}
}

func TestUUIDv7RFCVector(t *testing.T) {
	const vector = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"
	if ms := rfcTime.UnixMilli(); ms != 0x017F22E279B0 {
		t.Fatalf("the vector's time is %#x ms, want 0x017F22E279B0", ms)
	}
	u, err := ParseUUIDv7(vector)
	if err != nil {
		t.Fatalf("ParseUUIDv7: %v", err)
	}
	if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		t.Errorf("version %d, variant %s; want 7, RFC 4122/9562", u.Version(), u.Variant())
	}
	if u[6]>>4 != 0b0111 || u[8]>>6 != 0b10 {
		t.Errorf("ver bits %04b, var bits %02b; want 0111, 10", u[6]>>4, u[8]>>6)
	}
	for _, s := range []string{vector, strings.ToLower(vector), "urn:uuid:" + vector, strings.ReplaceAll(vector, "-", "")} {
		for name, timeOf := range map[string]func(string) (time.Time, error){"UUIDv7Time": UUIDv7Time, "Time": Time} {
			got, err := timeOf(s)
			if err != nil || !got.Equal(rfcTime) {
				t.Errorf("%s(%q) = %v, %v; want %v", name, s, got, err, rfcTime)
			}
		}
	}

	// A generator at that time lays its IDs out the same way.
	g, _ := NewUUIDv7(Settings{Clock: fakeclock.New(rfcTime)})
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "017f22e2-79b0-7") || len(id) != 36 {
		t.Errorf("Next() = %q, want 017f22e2-79b0-7…, 36 characters", id)
	}
	gu, err := ParseUUIDv7(id)
	if err != nil {
		t.Fatalf("ParseUUIDv7(%q): %v", id, err)
	}
	if gu[8]>>6 != 0b10 {
		t.Errorf("Next() = %q: variant bits %02b, want 10", id, gu[8]>>6)
	}
	if gu[6]&0x08 != 0 {
		t.Errorf("Next() = %q: the first ID of a millisecond has the counter's guard bit set", id)
	}
	if got, _ := g.Time(id); !got.Equal(rfcTime) {
		t.Errorf("Time(%q) = %v, want %v", id, got, rfcTime)
	}
}

// TestULIDSpecVector checks the ULID specification's examples. The
// timestamp 1469918176385 is the one of the reference implementation's
// seed-time example, 01ARYZ6S41TSV4RRFFQ69G5FAV; the spec's headline
// example 01ARZ3NDEKTSV4RRFFQ69G5FAV carries 1469922850259 (its first 10
// characters, 01ARZ3NDEK, are that number in Crockford base32).
func TestULIDSpecVector(t *testing.T) {
	for _, tc := range []struct {
		id string
		ms int64
	}{
		{"01ARYZ6S41TSV4RRFFQ69G5FAV", 1469918176385},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", 1469922850259},
		{"00000000000000000000000000", 0},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", maxMS},
	} {
		if got := ulid.MustParseStrict(tc.id).Time(); got != uint64(tc.ms) {
			t.Errorf("oklog: %s: Time() = %d, want %d", tc.id, got, tc.ms)
		}
		want := time.UnixMilli(tc.ms).UTC()
		for _, s := range []string{tc.id, strings.ToLower(tc.id)} {
			for name, timeOf := range map[string]func(string) (time.Time, error){"ULIDTime": ULIDTime, "Time": Time} {
				got, err := timeOf(s)
				if err != nil || !got.Equal(want) {
					t.Errorf("%s(%q) = %v, %v; want %v", name, s, got, err, want)
				}
			}
		}

		// A generator at that time starts its IDs with the same time part.
		g, _ := NewULID(Settings{Clock: fakeclock.New(time.UnixMilli(tc.ms))})
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if id[:10] != tc.id[:10] || len(id) != 26 {
			t.Errorf("Next() at %d = %q, want %s…, 26 characters", tc.ms, id, tc.id[:10])
		}
		if got, _ := g.Time(id); !got.Equal(want) {
			t.Errorf("Time(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{
		"", "nonsense", "01ARZ3NDEKTSV4RRFFQ69G5FAV-",
		"f47ac10b-58cc-4372-a567-0e02b2c3d479", // version 4
		"017f22e2-79b0-7cc3-18c4-dc0c0c07398f", // NCS variant
		"017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", // Microsoft variant
		"017f22e2-79b0-7cc3-98c4-dc0c0c07398g",
		"00000000-0000-0000-0000-000000000000",
	} {
		_, err := UUIDv7Time(s)
		wantErr(t, err, idforge.ErrInvalidArgument, "UUIDv7Time("+s+")")
	}
	for _, s := range []string{
		"", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAVV",
		"01ARZ3NDEKTSV4RRFFQ69G5FAU", // U is not Crockford base32
		"01ARZ3NDEKTSV4RRFFQ69G5FA!",
		"81ARZ3NDEKTSV4RRFFQ69G5FAV", // above 128 bits
		"01ARZ3NDEKTSV4RRFFQ69G5FA\xff",
	} {
		_, err := ULIDTime(s)
		wantErr(t, err, idforge.ErrInvalidArgument, "ULIDTime("+s+")")
	}
	_, err := Time("f47ac10b-58cc-4372-a567-0e02b2c3d479")
	wantErr(t, err, idforge.ErrInvalidArgument, "Time(v4)")
}

func wantErr(tb testing.TB, err, target error, what string) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Errorf("%s: error = %v, want one wrapping %v", what, err, target)
	}
}

// TestMonotonicWithinMillisecond issues many IDs at one fixed time: they
// strictly increase and all carry that time.
func TestMonotonicWithinMillisecond(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	for k, g := range kinds(t, fakeclock.New(at)) {
		ctx := context.Background()
		ids := make([]string, 0, 100_001)
		for range 1000 {
			id, err := g.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		batch, err := g.NextN(ctx, 99_000)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, batch...)
		checkIncreasing(t, string(k), ids)
		for _, i := range []int{0, 999, 1000, len(ids) - 1} {
			if got, err := g.Time(ids[i]); err != nil || !got.Equal(at) {
				t.Errorf("%s: Time(ID %d %s) = %v, %v; want %v", k, i, ids[i], got, err, at)
			}
		}
	}
}

// TestClockBackwards moves the clock an hour back: IDs keep increasing and
// keep the last issued time until the clock passes it again.
func TestClockBackwards(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	clock := fakeclock.New(at)
	for k, g := range kinds(t, clock) {
		clock.Set(at)
		ctx := context.Background()
		before, err := g.NextN(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(at.Add(-time.Hour))
		during, err := g.NextN(ctx, 100)
		if err != nil {
			t.Fatalf("%s: with the clock an hour back: %v", k, err)
		}
		clock.Set(at.Add(time.Millisecond))
		after, err := g.NextN(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		all := append(append(append([]string{}, before...), during...), after...)
		checkIncreasing(t, string(k), all)
		if got, _ := g.Time(during[99]); !got.Equal(at) {
			t.Errorf("%s: with the clock back, Time = %v, want the last issued time %v", k, got, at)
		}
		if got, _ := g.Time(after[0]); !got.Equal(at.Add(time.Millisecond)) {
			t.Errorf("%s: once the clock has caught up, Time = %v, want %v", k, got, at.Add(time.Millisecond))
		}
	}
}

// TestUUIDv7CounterOverflow fills the counter: the next ID moves one
// millisecond ahead and still sorts after.
func TestUUIDv7CounterOverflow(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	g, _ := NewUUIDv7(Settings{Clock: fakeclock.New(at)})
	ctx := context.Background()
	first, _ := g.Next(ctx)
	g.counter = 1<<counterBits - 2
	ids, err := g.NextN(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkIncreasing(t, "uuidv7", append([]string{first}, ids...))
	if got, _ := g.Time(ids[0]); !got.Equal(at) {
		t.Errorf("last counter value: Time = %v, want %v", got, at)
	}
	for _, id := range ids[1:] {
		if got, _ := g.Time(id); !got.Equal(at.Add(time.Millisecond)) {
			t.Errorf("after the overflow: Time(%s) = %v, want %v", id, got, at.Add(time.Millisecond))
		}
	}
}

// maxEntropy is an entropy source that makes the first ULID of every
// millisecond take the largest entropy, so that the next one in it
// overflows. The stream repeats what one millisecond reads: 10 bytes of
// entropy (all 0xFF), then the 4 bytes of the increment (1).
type maxEntropy struct{ n int }

func (r *maxEntropy) Read(p []byte) (int, error) {
	for i := range p {
		switch k := r.n % 14; {
		case k < 10:
			p[i] = 0xFF
		case k == 10:
			p[i] = 1
		default:
			p[i] = 0
		}
		r.n++
	}
	return len(p), nil
}

func TestULIDEntropyOverflow(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	g := newULID(Settings{Clock: fakeclock.New(at)}, &maxEntropy{})
	ids, err := g.NextN(context.Background(), 4)
	if err != nil {
		t.Fatal(err)
	}
	checkIncreasing(t, "ulid", ids)
	for i, id := range ids {
		want := at.Add(time.Duration(i) * time.Millisecond)
		if got, _ := g.Time(id); !got.Equal(want) {
			t.Errorf("ID %d %s: Time = %v, want %v", i, id, got, want)
		}
	}
}

// TestUniqueConcurrent issues IDs from many goroutines on the system
// clock (run it with -race): every ID is unique and each goroutine sees
// its IDs increase.
func TestUniqueConcurrent(t *testing.T) {
	const workers, each = 8, 2000
	for k, g := range kinds(t, nil) {
		results := make([][]string, workers)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				ctx := context.Background()
				var ids []string
				for len(ids) < each {
					if len(ids)%500 == 0 {
						batch, err := g.NextN(ctx, 50)
						if err != nil {
							errs <- err
							return
						}
						ids = append(ids, batch...)
						continue
					}
					id, err := g.Next(ctx)
					if err != nil {
						errs <- err
						return
					}
					ids = append(ids, id)
				}
				for i := 1; i < len(ids); i++ {
					if ids[i] <= ids[i-1] {
						errs <- fmt.Errorf("worker %d: %s after %s", w, ids[i], ids[i-1])
						return
					}
				}
				results[w] = ids
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", k, err)
		}
		seen := map[string]bool{}
		for _, ids := range results {
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("%s: %s issued twice", k, id)
				}
				seen[id] = true
			}
		}
	}
}

// TestIndependentGenerators checks that two generators at the same fake
// millisecond do not collide: their randomness is seeded separately.
func TestIndependentGenerators(t *testing.T) {
	clock := fakeclock.New(time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC))
	a, b := kinds(t, clock), kinds(t, clock)
	for k := range a {
		x, _ := a[k].NextN(context.Background(), 1000)
		y, _ := b[k].NextN(context.Background(), 1000)
		seen := map[string]bool{}
		for _, id := range append(x, y...) {
			if seen[id] {
				t.Fatalf("%s: two generators both issued %s", k, id)
			}
			seen[id] = true
		}
	}
}

func TestErrors(t *testing.T) {
	clock := fakeclock.New(time.Now())
	for k, g := range kinds(t, clock) {
		ctx := context.Background()
		for _, n := range []int{0, -1, MaxBatch + 1} {
			_, err := g.NextN(ctx, n)
			wantErr(t, err, idforge.ErrInvalidCount, fmt.Sprintf("%s: NextN(%d)", k, n))
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := g.Next(done)
		wantErr(t, err, context.Canceled, string(k)+": Next(done)")
		_, err = g.NextN(done, 1)
		wantErr(t, err, context.Canceled, string(k)+": NextN(done)")
	}
	for _, at := range []time.Time{time.Unix(-1, 0), time.UnixMilli(1 << 48)} {
		for k, g := range kinds(t, fakeclock.New(at)) {
			_, err := g.Next(context.Background())
			wantErr(t, err, idforge.ErrLayoutExpired, fmt.Sprintf("%s at %v", k, at))
		}
	}
	if _, err := New("uuidv1", Settings{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("New(uuidv1): %v, want ErrInvalidArgument", err)
	}
	if k, err := ParseKind("ulid"); err != nil || k != KindULID {
		t.Errorf("ParseKind(ulid) = %q, %v", k, err)
	}
	if _, err := ParseKind("ULID"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("ParseKind(ULID): %v, want ErrInvalidArgument", err)
	}
}

// TestLastMillisecond checks the end of the 48-bit range: the last
// millisecond issues, and a full counter there is an error, not a wrap.
func TestLastMillisecond(t *testing.T) {
	at := time.UnixMilli(maxMS)
	g, _ := NewUUIDv7(Settings{Clock: fakeclock.New(at)})
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "ffffffff-ffff-7") {
		t.Errorf("Next() = %s at the last millisecond", id)
	}
	g.counter = 1<<counterBits - 1
	_, err = g.Next(context.Background())
	wantErr(t, err, idforge.ErrLayoutExpired, "full counter at the last millisecond")

	u := newULID(Settings{Clock: fakeclock.New(at)}, &maxEntropy{})
	if _, err := u.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = u.Next(context.Background())
	wantErr(t, err, idforge.ErrLayoutExpired, "ULID entropy overflow at the last millisecond")
}
