package serial

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/idforge/idforge/internal/registry"
)

// A Kind is an expression type: it turns one @{kind:arg,opt=value} expression
// into a Part. The built-in kinds are date, seq, param, checksum and random;
// a program adds its own with RegisterKind.
type Kind interface {
	// Compile checks the expression's argument and options and returns the
	// Part that renders it. It runs once, at Parse. A returned *SyntaxError
	// is passed on as it is (so it can point at an option's column); any
	// other error becomes a *SyntaxError at the expression's column.
	Compile(e Expr) (Part, error)
}

// KindFunc adapts a function to the Kind interface.
type KindFunc func(e Expr) (Part, error)

// Compile calls f(e).
func (f KindFunc) Compile(e Expr) (Part, error) { return f(e) }

// A Part renders one expression of a template. Parts are shared by every
// evaluation of their Template, so they must be safe for concurrent use.
type Part interface {
	// MaxLen is the most bytes Append ever adds, known at parse time. It
	// is what makes Template.MaxLen exact; an Append that adds more fails
	// the evaluation instead of returning a longer serial.
	MaxLen() int
	// Append appends the part's value for one evaluation to dst and
	// returns the extended slice. It must not change dst[:len(dst)], and
	// it must not keep ev after it returns.
	Append(ctx context.Context, dst []byte, ev *Eval) ([]byte, error)
}

// Referrer is implemented by a Part whose value depends on other parts of
// the template. The template evaluates the parts it names first (a cycle
// or an unknown name is a parse error) and Eval.Value then returns their
// values.
type Referrer interface {
	// Refs returns the names of the parts this part reads: a name given
	// with as=, a seq or param name, a kind name when only one part has
	// that kind, or "all" for the whole text before this part.
	Refs() []string
}

// Expr is one @{…} expression as a Kind sees it at parse time.
type Expr struct {
	// Kind is the kind name, the text before ':'.
	Kind string
	// Arg is the text between ':' and the first ',' or '}', surrounding
	// blanks removed; "" when there is no ':'. Single-quoted text is kept
	// as written, quotes included.
	Arg string
	// Options are the name=value pairs in the order written, without the
	// as= option, which the template handles itself.
	Options []Option
	// Col is the 1-based byte column of the expression's "@{".
	Col int
	// ArgCol is the column of Arg's first byte (of the closing '}' or ','
	// when Arg is empty).
	ArgCol int
}

// Option is one name=value option of an expression.
type Option struct {
	Name  string
	Value string
	// Col and ValueCol are the 1-based byte columns of the name and of the
	// value's first byte.
	Col      int
	ValueCol int
}

// Option returns the named option and whether it was given.
func (e Expr) Option(name string) (Option, bool) {
	for _, o := range e.Options {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// OnlyOptions returns a *SyntaxError naming the first option of e that is
// not among names, or nil.
func (e Expr) OnlyOptions(names ...string) error {
	for _, o := range e.Options {
		if !slices.Contains(names, o.Name) {
			msg := fmt.Sprintf("%s takes no option %q", e.Kind, o.Name)
			if len(names) > 0 {
				msg += fmt.Sprintf(" (options: %v)", names)
			}
			return &SyntaxError{Col: o.Col, Msg: msg}
		}
	}
	return nil
}

// Eval is the state of one evaluation, handed to Part.Append. It is valid
// only during that call.
type Eval struct {
	t      *Template
	params map[string]string
	now    time.Time // the one clock reading of the evaluation
	at     time.Time // the time date parts render
	latest time.Time // the latest period a PeriodCounter returned
	buf    []byte    // the values of the parts evaluated so far
	spans  []span    // where each node's value is in buf; text order
	cur    int       // the node being evaluated
	digits []byte    // scratch for checksums
	pre    [][]int64 // per node: values fetched ahead by NextN
	k      int       // index into pre
}

type span struct{ start, end int }

// Time returns the time the evaluation renders: the clock reading taken
// once per evaluation, or the period of a PeriodCounter in the template
// when that is later (see the package documentation).
func (ev *Eval) Time() time.Time { return ev.at }

// Location returns the template's time zone (Options.Location).
func (ev *Eval) Location() *time.Location { return ev.t.loc }

// Param returns the request parameter name as the caller passed it,
// unvalidated.
func (ev *Eval) Param(name string) (string, bool) {
	v, ok := ev.params[name]
	return v, ok
}

// Value returns the rendered value of a part the current part declared in
// Refs (for "all": the whole text before the current part). It reports
// false for a name the current part did not declare.
func (ev *Eval) Value(ref string) (string, bool) {
	for _, r := range ev.t.nodes[ev.cur].refs {
		if r.name != ref {
			continue
		}
		if r.node >= 0 {
			s := ev.spans[r.node]
			return string(ev.buf[s.start:s.end]), true
		}
		var b []byte
		for i := range ev.cur {
			b = ev.appendNode(b, i)
		}
		return string(b), true
	}
	return "", false
}

// appendNode appends the value of node i (static text or an evaluated
// part) to b.
func (ev *Eval) appendNode(b []byte, i int) []byte {
	n := &ev.t.nodes[i]
	if n.part == nil {
		return append(b, n.static...)
	}
	s := ev.spans[i]
	return append(b, ev.buf[s.start:s.end]...)
}

// notePeriod records the period a PeriodCounter counted in.
func (ev *Eval) notePeriod(p time.Time) {
	if p.After(ev.latest) {
		ev.latest = p
	}
}

// kinds holds the kinds added with RegisterKind.
var kinds = registry.Named[Kind]("serial", "kind name", validKindName)

// builtinKinds are the names RegisterKind refuses; "text" names static
// text in an Explanation.
var builtinKinds = []string{kindChecksum, kindDate, kindParam, kindRandom, kindSeq, "text"}

// RegisterKind makes the kind name available to every template parsed
// afterwards. Call it from an init function. It panics when name is not
// a letter followed by letters, digits, '_', '-' or '.', when k is nil,
// when name is a built-in kind or when name is already registered: those
// are programming errors.
func RegisterKind(name string, k Kind) {
	if slices.Contains(builtinKinds, name) {
		panic(fmt.Sprintf("serial: RegisterKind(%q): a built-in kind has that name", name))
	}
	kinds.Register(registry.Scheme{Name: name}, k)
}

// Kinds returns the names of all kinds, built-in and registered, sorted.
func Kinds() []string {
	names := append(kinds.Names(), builtinKinds[:5]...)
	slices.Sort(names)
	return names
}

func validKindName(s string) bool {
	if s == "" || len(s) > 64 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
