package serial

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// uniqueCounterPart is a custom part that declares whether it is a
// counter: it renders "U" and a number that never repeats.
type uniqueCounterPart struct {
	unique bool
	n      *atomic.Int64
}

func (p uniqueCounterPart) MaxLen() int         { return 20 }
func (p uniqueCounterPart) UniqueCounter() bool { return p.unique }
func (p uniqueCounterPart) Append(_ context.Context, dst []byte, _ *Eval) ([]byte, error) {
	return fmt.Appendf(dst, "U%d", p.n.Add(1)), nil
}

func init() {
	var n atomic.Int64
	RegisterKind("test.counter", KindFunc(func(e Expr) (Part, error) {
		return uniqueCounterPart{unique: e.Arg != "no", n: &n}, nil
	}))
}

// uniqueSources resolves the names the uniqueness tests use: keys (k…),
// a per-day and a per-second counter, and a counter that does not say
// its period.
func uniqueSources() Resolver {
	return ResolverFunc(func(_ context.Context, name string) (Source, error) {
		switch name {
		case "daily":
			return Source{Counter: newCounter(24*time.Hour, time.UTC)}, nil
		case "persec", "persec2":
			return Source{Counter: newCounter(time.Second, time.UTC)}, nil
		case "silent":
			return Source{Counter: silentCounter{newCounter(time.Second, time.UTC)}}, nil
		}
		if strings.HasPrefix(name, "k") {
			return Source{Generator: newGen(1)}, nil
		}
		return Source{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	})
}

// A template is accepted only when it can prove that it never renders the
// same serial twice, and every refusal names the problem and its column.
func TestUniquenessRule(t *testing.T) {
	for _, text := range []string{
		// Every example in the package documentation and the READMEs.
		"@{date:yyyyMMdd}@{seq:daily,width=5}",
		"@{param:area}-@{param:unit,width=4}-@{seq:k-jobs,width=5}",
		"QJ@{seq:kqj,width=6}",
		"SN-@{seq:ksn,width=6}-@{checksum:mod,of=seq}",
		"@{date:yyMMddHHmmss}@{seq:persec,width=4}",
		"WB@{date:yyyyMMdd}@{seq:korder,width=8}@{checksum:luhn,of=seq}",
		// A counter alone, or after anything when it is last.
		"@{seq:k}",
		"@{param:shop}-@{seq:k}",
		"@{param:shop}@{seq:k,width=6}",
		"@{random:4}@{param:p}@{seq:k,width=3}",
		// A counter first, closed by a byte it never renders.
		"@{seq:k}-@{param:shop}",
		"@{seq:k,width=4,pad=*}@{param:shop}",
		// Fixed-length parts around a counter of any length.
		"@{date:yyyyMMdd}@{seq:k}@{random:4}",
		"@{param:p,width=3}@{seq:k}@{checksum:luhn}",
		// A per-period counter whose date can be read back.
		"@{param:p}@{date:yyyyMMdd}@{seq:daily,width=4}",
		"@{date:yyyy}/@{date:MM}/@{date:dd}-@{seq:daily}",
		"@{date:yyyyMMdd}@{param:p}@{date:dd}-@{seq:daily}",
		// One key is enough: the per-period counters around it need not
		// prove anything.
		"@{date:HH}@{seq:silent}-@{seq:k}",
		"@{date:yyMMddHHmmss}-@{seq:persec}-@{seq:persec2}-@{seq:k}",
		// A custom part that declares itself a counter.
		"X@{test.counter}",
		"@{date:yyyyMMdd}@{test.counter}",
	} {
		if _, err := Parse(context.Background(), text, Options{Resolver: uniqueSources()}); err != nil {
			t.Errorf("Parse(%q): %v", text, err)
		}
	}

	for _, tc := range []struct {
		text string
		col  int
		msg  []string
	}{
		{"JUSTTEXT", 1, []string{"no counter", "static text", "@{seq:KEY}"}},
		{"R@{random:4}", 1, []string{"no counter", "random characters"}},
		{"@{date:yyyyMMddHHmmss.SSS}", 1, []string{"no counter", "dates"}},
		{"@{param:order}", 1, []string{"no counter", "parameters"}},
		{"@{test.counter:no}", 1, []string{"no counter", "serial.UniqueCounter"}},
		// Neighbours of varying length can swap characters with the
		// number: "A1"+"23" and "A12"+"3" are both A123.
		{"@{param:shop}@{seq:k}", 14, []string{"seq:k", "param part at col 1", "varies in length", "width="}},
		{"@{seq:k}@{param:shop}", 1, []string{"seq:k", "param part at col 9"}},
		{"@{seq:k}@{seq:k2}", 1, []string{"seq:k", "seq part at col 9"}},
		{"@{param:a}-@{seq:k}-@{param:b}", 12, []string{"seq:k", "param part at col 1"}},
		{"@{seq:k}0@{param:p}", 1, []string{"seq:k", "param part at col 10"}},
		{"@{param:p}@{seq:k,width=4}@{param:q}", 11, []string{"seq:k", "param part at col 1", "fixed length"}},
		{"@{date:yyyyMd}@{seq:k}", 15, []string{"seq:k", "date part at col 1"}},
		{"A@{test.counter}@{param:p}", 2, []string{"test.counter", "param part at col 17"}},
		// A digit other than 0 as the padding makes 1 and 11 alike.
		{"@{seq:k,width=3,pad=1}", 21, []string{"pad=1", "ambiguous"}},
		// Per-period counters.
		{"QJ@{seq:daily,width=6}", 3, []string{"counts per day", "@{date:yyyyMMdd}"}},
		{"@{date:yyyy-M-d}-@{seq:daily}", 1, []string{"counts per day", "vary in width", "padded"}},
		{"@{param:p}@{date:yyyyMMdd}@{param:q}-@{seq:daily}", 11, []string{"counts per day", "this date's day", "param part at col 1"}},
		{"X@{seq:silent}", 2, []string{"does not say which", "PeriodReporter"}},
		{"@{date:yyMMddHHmmss}-@{seq:persec}-@{seq:persec2}", 22, []string{"another per-period counter", "seq:persec2"}},
	} {
		_, err := Parse(context.Background(), tc.text, Options{Resolver: uniqueSources()})
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError wrapping ErrInvalidArgument", tc.text, err)
			continue
		}
		if se.Col != tc.col {
			t.Errorf("Parse(%q): col %d, want %d (%v)", tc.text, se.Col, tc.col, err)
		}
		for _, m := range tc.msg {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("Parse(%q): %q does not mention %q", tc.text, err, m)
			}
		}
	}
}
