package serial

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

// FuzzParse checks that Parse never panics, that every error is a
// *SyntaxError with a column inside the text (or just after it) wrapping
// idforge.ErrInvalidArgument, that what parses rests its uniqueness on a
// counter, and that what parses never renders longer than its MaxLen:
// with the smallest and the largest numbers the sources can return and
// with the longest valid parameters.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"@{date:yyyyMMdd}@{seq:order,width=5}",
		"@{param:area}-@{param:unit,width=4}-@{seq:unit-jobs,width=5}",
		"@{param:area,chars=digits,max=4}-@{param:unit,width=4,chars=digits}-@{seq:jobs,by=unit,width=5}",
		"@{seq:jobs,by=unit}@{param:unit}",
		"@{param:unit,max=3}-@{seq:jobs,by=unit}",
		"@{seq:jobs,by=nope,width=3}",
		"QJ@{seq:qj,width=6}",
		"SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}",
		"@{date:yyMMddHHmmss}@{seq:persec,width=4}",
		"@{checksum:iso7064,of=n}@{seq:x,as=n}@{random:3,chars=crockford}",
		"@{date:yyyy'-''x'MM-dd HH:mm:ss.SSS D,tz=+08:00}",
		"a@@b@{param:p,width=3,pad=0,chars=digits}@{checksum:luhn}",
		"@{test.mirror:all}",
		"@{checksum:luhn,of=b,as=a}@{checksum:luhn,of=a,as=b}",
		"@{", "@{}", "@{seq", "@{date:'", "@{seq:a,width=", "@@", "@{ seq : a , width = 3 }",
	} {
		f.Add(s)
	}
	at := time.Date(2025, 4, 13, 12, 0, 0, 123456789, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		for _, value := range []int64{1, math.MaxInt64} {
			resolve := creatingResolver(func(_ context.Context, name string) (Source, error) {
				switch {
				case strings.HasPrefix(name, "missing"):
					return Source{}, idforge.ErrUnknownKey
				case strings.HasPrefix(name, "c"):
					return Source{Counter: fixedCounter{value}}, nil
				}
				return Source{Generator: newGen(value)}, nil
			})
			tp, err := Parse(context.Background(), text, Options{Resolver: resolve, Clock: fakeclock.New(at)})
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("Parse(%q): %v is not a *SyntaxError", text, err)
				}
				if se.Col < 1 || se.Col > len(text)+1 {
					t.Fatalf("Parse(%q): col %d outside [1, %d]", text, se.Col, len(text)+1)
				}
				if !errors.Is(err, idforge.ErrInvalidArgument) {
					t.Fatalf("Parse(%q): %v does not wrap ErrInvalidArgument", text, err)
				}
				return
			}
			// What parses proves its uniqueness with a counter.
			if x := tp.Explain(); x.UniqueBy < 0 || x.UniqueBy >= len(x.Parts) || x.Parts[x.UniqueBy].Kind != kindSeq && x.Parts[x.UniqueBy].Kind != "test.counter" {
				t.Fatalf("Parse(%q) accepted it, unique by part %d of %v", text, x.UniqueBy, x.Parts)
			}
			_ = tp.Explain().String()
			s, err := tp.Next(context.Background(), longestParams(tp))
			if err == nil && len(s) > tp.MaxLen() {
				t.Fatalf("Parse(%q): rendered %q, %d bytes, more than MaxLen %d", text, s, len(s), tp.MaxLen())
			}
		}
	})
}

// creatingResolver is a Resolver that is also a Creator: Create resolves
// as Resolve does.
type creatingResolver func(ctx context.Context, name string) (Source, error)

func (f creatingResolver) Resolve(ctx context.Context, name string) (Source, error) {
	return f(ctx, name)
}
func (f creatingResolver) Create(ctx context.Context, name string) (Source, error) {
	return f(ctx, name)
}

// fixedCounter is a PeriodCounter that always returns n in at's second.
type fixedCounter struct{ n int64 }

func (c fixedCounter) Next(_ context.Context, at time.Time) (int64, time.Time, error) {
	return c.n, at.Truncate(time.Second), nil
}

// longestParams returns the longest valid value for each parameter of tp.
func longestParams(tp *Template) map[string]string {
	params := map[string]string{}
	for _, i := range tp.paramNodes {
		p := tp.nodes[i].part.(*paramPart)
		params[p.name] = strings.Repeat(p.set.alphabet[len(p.set.alphabet)-1:], p.max)
	}
	return params
}
