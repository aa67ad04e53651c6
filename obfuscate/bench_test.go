package obfuscate

import (
	"testing"
)

// Run: go test -run '^$' -bench . -benchmem ./obfuscate/

func BenchmarkPermutation(b *testing.B) {
	for _, bits := range []int{40, 63} {
		p := mustNew(b, testKey(1), bits)
		b.Run("Encode/"+itoa(bits), func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; b.Loop(); i++ {
				c, _ := p.Encode(int64(i) & p.Max())
				sink ^= c
			}
			_ = sink
		})
		b.Run("Decode/"+itoa(bits), func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; b.Loop(); i++ {
				v, _ := p.Decode(int64(i) & p.Max())
				sink ^= v
			}
			_ = sink
		})
	}
}

func BenchmarkBase62(b *testing.B) {
	c := mustBase62(b, Base62Settings{MinLength: 7})
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, _ = c.Encode(int64(i) << 20)
		}
	})
	b.Run("AppendEncode", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 16)
		for i := 0; b.Loop(); i++ {
			_, _ = c.AppendEncode(buf[:0], int64(i)<<20)
		}
	})
	s, _ := c.Encode(1 << 39)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = c.Decode(s)
		}
	})
}

func BenchmarkSqids(b *testing.B) {
	q := mustSqids(b, SqidsSettings{MinLength: 10})
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, _ = q.Encode(int64(i) << 20)
		}
	})
	s, _ := q.Encode(1 << 39)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = q.Decode(s)
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	for _, spec := range []string{"decimal", "hex:min=10", "base62:min=7", "sqids:min=10", "feistel:bits=40+base62:min=7", "feistel:bits=40+sqids"} {
		f, err := ParseFormat(spec)
		if err != nil {
			b.Fatal(err)
		}
		if f.Bits() > 0 {
			f, _ = f.WithKey(testKey(1))
		}
		b.Run("Encode/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = f.Encode(int64(i) & (1<<40 - 1))
			}
		})
		s, _ := f.Encode(1 << 39)
		b.Run("Decode/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = f.Decode(s)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
