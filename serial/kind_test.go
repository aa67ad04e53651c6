package serial

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// mirror renders the value of another part backwards: a custom kind that
// refers to other parts.
type mirror struct{ of string }

func (m mirror) Refs() []string { return []string{m.of} }
func (m mirror) MaxLen() int    { return 40 }
func (m mirror) Append(_ context.Context, dst []byte, ev *Eval) ([]byte, error) {
	v, ok := ev.Value(m.of)
	if !ok {
		return dst, fmt.Errorf("no value for %q", m.of)
	}
	if _, ok := ev.Value("undeclared"); ok {
		return dst, errors.New("Value answered for an undeclared name")
	}
	for i := len(v) - 1; i >= 0; i-- {
		dst = append(dst, v[i])
	}
	return dst, nil
}

// liar claims one byte and renders two.
type liar struct{}

func (liar) MaxLen() int { return 1 }
func (liar) Append(_ context.Context, dst []byte, _ *Eval) ([]byte, error) {
	return append(dst, "xx"...), nil
}

// clockPart renders the evaluation time as Unix seconds, and a request
// parameter as given.
type clockPart struct{}

func (clockPart) MaxLen() int { return 30 }
func (clockPart) Append(_ context.Context, dst []byte, ev *Eval) ([]byte, error) {
	p, _ := ev.Param("who")
	return fmt.Appendf(dst, "%d/%s/%s", ev.Time().Unix(), ev.Location(), p), nil
}

func init() {
	RegisterKind("test.mirror", KindFunc(func(e Expr) (Part, error) {
		if err := e.OnlyOptions(); err != nil {
			return nil, err
		}
		return mirror{of: e.Arg}, nil
	}))
	RegisterKind("test-liar", KindFunc(func(Expr) (Part, error) { return liar{}, nil }))
	RegisterKind("test_clock", KindFunc(func(Expr) (Part, error) { return clockPart{}, nil }))
	RegisterKind("testfail", KindFunc(func(e Expr) (Part, error) {
		switch e.Arg {
		case "syntax":
			o, _ := e.Option("x")
			return nil, &SyntaxError{Col: o.ValueCol, Msg: "x is bad"}
		case "badcol":
			return nil, &SyntaxError{Col: 1000, Msg: "col out of range"}
		case "nil":
			return nil, nil
		}
		return nil, errors.New("testfail always fails")
	}))
}

func TestCustomKinds(t *testing.T) {
	if !slices.IsSorted(Kinds()) {
		t.Fatalf("Kinds() = %v, not sorted", Kinds())
	}
	for _, k := range []string{"checksum", "date", "param", "random", "seq", "test.mirror", "test-liar", "test_clock", "testfail"} {
		if !slices.Contains(Kinds(), k) {
			t.Errorf("Kinds() lacks %q", k)
		}
	}

	// A custom part referring to a seq placed after it is evaluated after it.
	tp := mustParse(t, "@{test.mirror:seq}-@{seq:s}", Options{Resolver: Sources{"s": {Generator: newGen(123)}}})
	if got := mustNext(t, tp, nil); got != "321-123" {
		t.Fatalf("got %q", got)
	}
	if x := tp.Explain(); !slices.Equal(x.Order, []int{2, 0}) || !slices.Equal(x.Parts[0].Refs, []string{"seq"}) {
		t.Fatalf("order %v, refs %v", x.Order, x.Parts[0].Refs)
	}
	tp = mustParse(t, "AB@{seq:s,width=1}@{test.mirror:all}", Options{Resolver: Sources{"s": {Generator: newGen(7)}}})
	if got := mustNext(t, tp, nil); got != "AB77BA" {
		t.Fatalf("got %q", got)
	}

	at := time.Date(2017, 3, 4, 0, 0, 0, 0, time.UTC)
	tp = parseCounted(t, "@{test_clock}", Options{Clock: clockAt(2017, 3, 4, 0, 0, 0), Location: time.FixedZone("X", 3600)})
	if got, want := nextCounted(t, tp, map[string]string{"who": "me"}), fmt.Sprintf("%d/X/me", at.Unix()); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}

	// A part that renders more than its MaxLen fails the evaluation.
	tp = parseCounted(t, "@{test-liar}", Options{})
	_, err := tp.Next(context.Background(), nil)
	wantErr(t, err, nil, "more than its MaxLen 1")

	for _, tc := range []struct {
		template string
		col      int
		msg      string
	}{
		{"ab@{testfail:syntax,x=1}", 23, "x is bad"},
		{"ab@{testfail:badcol}", 3, "col out of range"},
		{"ab@{testfail:other}", 3, "testfail always fails"},
		{"ab@{testfail:nil}", 3, "nil Part"},
		{"ab@{test.mirror:seq,x=1}", 21, `test.mirror takes no option "x"`},
		{"ab@{test.mirror:nope}", 3, `no part is named "nope"`},
	} {
		_, err := Parse(context.Background(), tc.template, Options{})
		var se *SyntaxError
		if !errors.As(err, &se) || se.Col != tc.col || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Parse(%q) = %v, want a col %d SyntaxError mentioning %q", tc.template, err, tc.col, tc.msg)
		}
	}
}

func TestRegisterKindPanics(t *testing.T) {
	k := KindFunc(func(Expr) (Part, error) { return liar{}, nil })
	for _, tc := range []struct {
		name string
		kind Kind
		msg  string
	}{
		{"test.mirror", k, "registered twice"},
		{"seq", k, "built-in"},
		{"text", k, "built-in"},
		{"9lives", k, "invalid kind name"},
		{"", k, "invalid kind name"},
		{"a b", k, "invalid kind name"},
		{"fresh", nil, "nil Kind"},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.msg) {
					t.Errorf("RegisterKind(%q): recovered %v, want a panic mentioning %q", tc.name, r, tc.msg)
				}
			}()
			RegisterKind(tc.name, tc.kind)
		}()
	}
}
