package serial

import (
	"context"
	"crypto/rand"
)

const kindRandom = "random"

// randomPart renders @{random:N,chars=SET}: N characters drawn uniformly
// from SET with crypto/rand.
type randomPart struct {
	n     int
	set   *charSet
	limit int // bytes ≥ limit are rejected, so that b % len(alphabet) is uniform
}

func compileRandom(e Expr) (*randomPart, error) {
	if err := e.OnlyOptions("chars"); err != nil {
		return nil, err
	}
	p := &randomPart{set: charSets["digits"]}
	if e.Arg == "" {
		return nil, errAt(e.ArgCol, "random needs a length, e.g. @{random:4}")
	}
	var err error
	if p.n, err = parseWidth(Option{Name: "random", Value: e.Arg, ValueCol: e.ArgCol}, 1); err != nil {
		return nil, err
	}
	if o, ok := e.Option("chars"); ok {
		if p.set, err = parseCharSet(o); err != nil {
			return nil, err
		}
	}
	k := len(p.set.alphabet)
	p.limit = 256 - 256%k
	return p, nil
}

func (p *randomPart) MaxLen() int { return p.n }

// digitsOnly reports whether the part renders only digits.
func (p *randomPart) digitsOnly() bool { return allDigits(p.set.alphabet) }

func (p *randomPart) Append(_ context.Context, dst []byte, _ *Eval) ([]byte, error) {
	var b [64]byte
	alphabet := p.set.alphabet
	for left := p.n; left > 0; {
		buf := b[:min(len(b), left+left/2+4)]
		rand.Read(buf) // never fails (crypto/rand crashes the program instead)
		for _, c := range buf {
			if int(c) >= p.limit {
				continue
			}
			dst = append(dst, alphabet[int(c)%len(alphabet)])
			if left--; left == 0 {
				break
			}
		}
	}
	return dst, nil
}
