package obfuscate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/quick"
)

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  []byte
		bits int
	}{
		{"zero bits", testKey(1), 0},
		{"64 bits", testKey(1), 64},
		{"negative bits", testKey(1), -3},
		{"nil key", nil, 40},
		{"short key", make([]byte, MinKeyLen-1), 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.key, tc.bits)
			if p != nil {
				t.Errorf("New returned a permutation")
			}
			wantInvalid(t, err, "New")
		})
	}
}

// TestBijectiveExhaustive checks every width up to 16 bits for a few keys:
// each output is in range and hit exactly once, and decodes back.
func TestBijectiveExhaustive(t *testing.T) {
	for _, key := range [][]byte{testKey(1), testKey(2), make([]byte, MinKeyLen)} {
		for bits := 1; bits <= 16; bits++ {
			p := mustNew(t, key, bits)
			size := int64(1) << bits
			seen := make([]bool, size)
			for v := range size {
				c, err := p.Encode(v)
				if err != nil {
					t.Fatalf("%d bits: Encode(%d): %v", bits, v, err)
				}
				if c < 0 || c >= size {
					t.Fatalf("%d bits: Encode(%d) = %d, out of range", bits, v, c)
				}
				if seen[c] {
					t.Fatalf("%d bits: Encode(%d) = %d, already an image", bits, v, c)
				}
				seen[c] = true
				if d, err := p.Decode(c); err != nil || d != v {
					t.Fatalf("%d bits: Decode(%d) = %d, %v; want %d", bits, c, d, err, v)
				}
			}
		}
	}
}

// TestRoundTripWide checks random values of wide and odd widths.
func TestRoundTripWide(t *testing.T) {
	for _, bits := range []int{17, 31, 33, 40, 47, 53, 62, 63} {
		p := mustNew(t, testKey(3), bits)
		check := func(x uint64) bool {
			v := int64(x & uint64(p.Max()))
			c, err := p.Encode(v)
			if err != nil || c < 0 || c > p.Max() {
				return false
			}
			d, err := p.Decode(c)
			return err == nil && d == v
		}
		if err := quick.Check(check, &quick.Config{MaxCount: 5000, Rand: nil}); err != nil {
			t.Errorf("%d bits: %v", bits, err)
		}
		// The edges of the range, too.
		for _, v := range []int64{0, 1, p.Max() - 1, p.Max()} {
			if !check(uint64(v)) {
				t.Errorf("%d bits: round trip of %d failed", bits, v)
			}
		}
	}
}

func TestOutOfRange(t *testing.T) {
	for _, bits := range []int{1, 8, 40, 63} {
		p := mustNew(t, testKey(1), bits)
		bad := []int64{-1, math.MinInt64}
		if bits < 63 {
			bad = append(bad, p.Max()+1, math.MaxInt64)
		}
		for _, v := range bad {
			_, err := p.Encode(v)
			wantInvalid(t, err, fmt.Sprintf("%d bits: Encode(%d)", bits, v))
			_, err = p.Decode(v)
			wantInvalid(t, err, fmt.Sprintf("%d bits: Decode(%d)", bits, v))
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b := mustNew(t, testKey(5), 40), mustNew(t, testKey(5), 40)
	for v := range int64(1000) {
		x, _ := a.Encode(v)
		y, _ := b.Encode(v)
		if x != y {
			t.Fatalf("Encode(%d): %d and %d from the same key", v, x, y)
		}
	}
}

// TestKeysAndWidthsDiffer checks that other keys, and the same key at
// another width, give other images for nearly every input.
func TestKeysAndWidthsDiffer(t *testing.T) {
	const n = 10000
	base := mustNew(t, testKey(1), 40)
	for _, tc := range []struct {
		name  string
		other *Permutation
	}{
		{"other key", mustNew(t, testKey(2), 40)},
		{"key differing in one bit", mustNew(t, append(testKey(1)[:31:31], testKey(1)[31]^1), 40)},
		{"same key, 41 bits", mustNew(t, testKey(1), 41)},
	} {
		same := 0
		for v := range int64(n) {
			x, _ := base.Encode(v)
			y, _ := tc.other.Encode(v)
			if x == y {
				same++
			}
		}
		if same > 2 {
			t.Errorf("%s: %d of %d images equal", tc.name, same, n)
		}
	}
}

// TestOrderHidden checks that the images of consecutive IDs show no trace
// of their order: Spearman's rank correlation between an ID and its image,
// and between the images under two keys, is near 0, and the image goes up
// from one ID to the next about half the time. The keys are fixed, so the
// test is deterministic; the bounds are about 5 standard deviations.
func TestOrderHidden(t *testing.T) {
	for _, tc := range []struct {
		bits int
		n    int
	}{
		{40, 4000},
		{9, 512}, // the whole domain
		{63, 4000},
	} {
		p, q := mustNew(t, testKey(7), tc.bits), mustNew(t, testKey(8), tc.bits)
		ids := make([]float64, tc.n)
		ps := make([]float64, tc.n)
		qs := make([]float64, tc.n)
		ups := 0
		for i := range tc.n {
			x, _ := p.Encode(int64(i))
			y, _ := q.Encode(int64(i))
			ids[i], ps[i], qs[i] = float64(i), float64(x), float64(y)
			if i > 0 && ps[i] > ps[i-1] {
				ups++
			}
		}
		bound := 5 / math.Sqrt(float64(tc.n-1))
		if r := spearman(ids, ps); math.Abs(r) > bound {
			t.Errorf("%d bits: rank correlation of ID and image = %.3f, want |r| < %.3f", tc.bits, r, bound)
		}
		if r := spearman(ps, qs); math.Abs(r) > bound {
			t.Errorf("%d bits: rank correlation of two keys' images = %.3f, want |r| < %.3f", tc.bits, r, bound)
		}
		if f := float64(ups) / float64(tc.n-1); math.Abs(f-0.5) > bound/2 {
			t.Errorf("%d bits: image rises in %.3f of steps, want about 0.5", tc.bits, f)
		}
	}
}

// spearman returns Spearman's rank correlation of xs and ys (no ties).
func spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	n := float64(len(xs))
	var d2 float64
	for i := range rx {
		d := rx[i] - ry[i]
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(xs))
	for rank, i := range idx {
		r[i] = float64(rank)
	}
	return r
}

// TestAvalanche checks that flipping the lowest input bit flips about half
// the output bits.
func TestAvalanche(t *testing.T) {
	p := mustNew(t, testKey(9), 48)
	rnd := rand.New(rand.NewPCG(3, 4))
	const n = 5000
	flipped := 0
	for range n {
		v := rnd.Int64N(p.Max())
		x, _ := p.Encode(v)
		y, _ := p.Encode(v ^ 1)
		for d := uint64(x ^ y); d != 0; d &= d - 1 {
			flipped++
		}
	}
	if mean := float64(flipped) / n; math.Abs(mean-24) > 1 {
		t.Errorf("mean flipped bits = %.2f of 48, want about 24", mean)
	}
}

func TestConcurrentUse(t *testing.T) {
	p := mustNew(t, testKey(1), 40)
	want := make([]int64, 1000)
	for i := range want {
		want[i], _ = p.Encode(int64(i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i, w := range want {
				c, err := p.Encode(int64(i))
				if err == nil && c != w {
					err = fmt.Errorf("Encode(%d) = %d, want %d", i, c, w)
				}
				if err == nil {
					var d int64
					if d, err = p.Decode(c); err == nil && d != int64(i) {
						err = fmt.Errorf("Decode(%d) = %d, want %d", c, d, i)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNoAllocations(t *testing.T) {
	p := mustNew(t, testKey(1), 40)
	allocs := testing.AllocsPerRun(100, func() {
		c, _ := p.Encode(12345)
		_, _ = p.Decode(c)
	})
	if allocs != 0 {
		t.Errorf("Encode+Decode allocate %.1f times, want 0", allocs)
	}
}

func TestRoundsEven(t *testing.T) {
	if Rounds%2 != 0 || Rounds < 4 {
		t.Fatalf("Rounds = %d: encode and decode assume an even number, at least 4", Rounds)
	}
}
