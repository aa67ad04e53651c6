package obfuscate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/chars"
)

// Format is how a key's int64 IDs are shown to the world: optionally
// permuted (a feistel stage), then written as text (decimal, hex, base62
// or sqids). ParseFormat reads one from a spec; see the package
// documentation for the grammar. The zero Format is plain decimal.
//
// A spec never holds a key. When Bits() is not 0 the caller sets Permute to
// the Permutation of that width built from a key it keeps elsewhere
// (configuration, environment), e.g. with WithKey; Validate checks it.
//
// Formats are values; one whose Permute is set is safe for concurrent use.
type Format struct {
	// Permute is the permutation applied before the text stage. It must
	// be set, with Permute.Bits() == Bits(), exactly when the spec has a
	// feistel stage.
	Permute *Permutation

	bits   int         // width of the feistel stage, 0 for none
	digits *digits     // decimal, hex or base62 text stage
	sqids  *sqidsStage // sqids text stage
	// Neither text stage set means plain decimal (the zero Format).
}

const (
	decimalAlphabet = "0123456789"
	hexAlphabet     = "0123456789abcdef"
)

// ParseFormat reads a format spec such as "base62:min=8" or
// "feistel:bits=40+base62:min=7". An empty spec is plain decimal.
// Errors wrap idforge.ErrInvalidArgument and say what is wrong.
func ParseFormat(spec string) (Format, error) {
	f, err := parseFormat(spec)
	if err != nil {
		// The sentinel first, so the message begins "idforge: …" once;
		// the spec it was about after.
		return Format{}, fmt.Errorf("%w (format %s)", err, clip(spec))
	}
	return f, nil
}

// syntaxError returns an error of the spec grammar, wrapping
// idforge.ErrInvalidArgument.
func syntaxError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{idforge.ErrInvalidArgument}, args...)...)
}

func parseFormat(spec string) (Format, error) {
	var f Format
	if spec == "" {
		return f, nil
	}
	stages := strings.Split(spec, "+")
	if len(stages) > 2 {
		return f, syntaxError("%d stages, want at most a feistel stage and a text stage", len(stages))
	}
	for i, stage := range stages {
		name, opts, err := splitStage(stage)
		if err != nil {
			return f, err
		}
		if name == "feistel" {
			if i != 0 {
				return f, syntaxError("the feistel stage must come first, and only once")
			}
			if f.bits, err = parseFeistel(opts); err != nil {
				return f, err
			}
			continue
		}
		if i != len(stages)-1 {
			return f, syntaxError("text stage %q must come last", name)
		}
		if f.digits, f.sqids, err = parseText(name, opts); err != nil {
			return f, err
		}
	}
	return f, nil
}

// splitStage splits "name:k=v,k=v" into its name and options, checking
// that every name is known syntax and appears once.
func splitStage(stage string) (string, map[string]string, error) {
	name, rest, hasOpts := strings.Cut(stage, ":")
	if name == "" {
		return "", nil, syntaxError("empty stage name")
	}
	if !isName(name) {
		return "", nil, syntaxError("stage name %q: want lower-case letters and digits", name)
	}
	opts := map[string]string{}
	if !hasOpts {
		return name, opts, nil
	}
	if rest == "" {
		return "", nil, syntaxError("%s: empty option list after ':'", name)
	}
	for _, o := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(o, "=")
		switch {
		case !ok:
			return "", nil, syntaxError("%s: option %q: want name=value", name, o)
		case !isName(k):
			return "", nil, syntaxError("%s: option name %q: want lower-case letters and digits", name, k)
		case v == "":
			return "", nil, syntaxError("%s: option %s: empty value", name, k)
		}
		if _, dup := opts[k]; dup {
			return "", nil, syntaxError("%s: option %s given twice", name, k)
		}
		if r, refused := chars.FirstRefused(v, printableASCII); refused {
			return "", nil, syntaxError("%s: option %s: %s is not allowed; want printable ASCII without space", name, k, r)
		}
		opts[k] = v
	}
	return name, opts, nil
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

func parseFeistel(opts map[string]string) (int, error) {
	if err := onlyOptions("feistel", opts, "bits"); err != nil {
		return 0, err
	}
	s, ok := opts["bits"]
	if !ok {
		return 0, syntaxError("feistel: bits=N (1 to %d) is required", MaxBits)
	}
	bits, err := parseInt(s, 1, MaxBits)
	if err != nil {
		return 0, syntaxError("feistel: bits: %v", err)
	}
	return bits, nil
}

func parseText(name string, opts map[string]string) (*digits, *sqidsStage, error) {
	switch name {
	case "decimal", "hex":
		if err := onlyOptions(name, opts, "min"); err != nil {
			return nil, nil, err
		}
		min, err := optInt(name, opts, "min", MaxMinLength)
		if err != nil {
			return nil, nil, err
		}
		alphabet := decimalAlphabet
		if name == "hex" {
			alphabet = hexAlphabet
		}
		d, err := newDigits(name, alphabet, min)
		if err != nil {
			return nil, nil, err
		}
		return &d, nil, nil
	case "base62":
		if err := onlyOptions(name, opts, "min", "alphabet"); err != nil {
			return nil, nil, err
		}
		min, err := optInt(name, opts, "min", MaxMinLength)
		if err != nil {
			return nil, nil, err
		}
		b, err := NewBase62(Base62Settings{Alphabet: opts["alphabet"], MinLength: min})
		if err != nil {
			return nil, nil, err
		}
		return &b.d, nil, nil
	case "sqids":
		if err := onlyOptions(name, opts, "min", "alphabet", "blocklist"); err != nil {
			return nil, nil, err
		}
		min, err := optInt(name, opts, "min", MaxSqidsMinLength)
		if err != nil {
			return nil, nil, err
		}
		st := &sqidsStage{alphabet: opts["alphabet"], min: min}
		switch opts["blocklist"] {
		case "", "default":
		case "none":
			st.noBlocklist = true
		default:
			return nil, nil, syntaxError("sqids: blocklist=%q: want default or none", opts["blocklist"])
		}
		settings := SqidsSettings{Alphabet: st.alphabet, MinLength: min}
		if st.noBlocklist {
			settings.Blocklist = []string{}
		}
		if st.q, err = NewSqids(settings); err != nil {
			return nil, nil, err
		}
		return nil, st, nil
	}
	return nil, nil, syntaxError("unknown stage %q (want feistel, decimal, hex, base62 or sqids)", name)
}

func onlyOptions(stage string, opts map[string]string, allowed ...string) error {
	for k := range opts {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return syntaxError("%s: unknown option %q (allowed: %s)", stage, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func optInt(stage string, opts map[string]string, name string, hi int) (int, error) {
	s, ok := opts[name]
	if !ok {
		return 0, nil
	}
	n, err := parseInt(s, 0, hi)
	if err != nil {
		return 0, syntaxError("%s: %s: %v", stage, name, err)
	}
	return n, nil
}

// parseInt reads a plain decimal in [lo, hi]: no sign, no leading zeros.
func parseInt(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || s[0] == '-' || (len(s) > 1 && s[0] == '0') || n < lo || n > hi {
		return 0, fmt.Errorf("%q: want a whole number from %d to %d", s, lo, hi) // callers wrap
	}
	return n, nil
}

// Bits returns the width of the format's feistel stage, or 0 when it has
// none (and needs no key).
func (f Format) Bits() int { return f.bits }

// Max returns the largest ID f can encode: 2^Bits() − 1 when it has a
// feistel stage (the permutation's range), math.MaxInt64 otherwise. A key
// shown in f cannot issue past it, so its definition must fit below it.
func (f Format) Max() int64 {
	if f.bits == 0 {
		return math.MaxInt64
	}
	return int64(uint64(1)<<f.bits - 1)
}

// WithKey returns a copy of f whose Permute is built from key with New.
// It returns an error wrapping idforge.ErrInvalidArgument when f has no
// feistel stage or New rejects the key.
func (f Format) WithKey(key []byte) (Format, error) {
	if f.bits == 0 {
		return f, fmt.Errorf("%w: format %q has no feistel stage to key", idforge.ErrInvalidArgument, f.String())
	}
	p, err := New(key, f.bits)
	if err != nil {
		return f, err
	}
	f.Permute = p
	return f, nil
}

// Validate reports whether f can encode: an error wrapping ErrNoKey when
// Permute does not match the feistel stage (see Format).
func (f Format) Validate() error {
	switch {
	case f.bits == 0 && f.Permute != nil:
		return fmt.Errorf("%w: format %q has no feistel stage but a permutation is set", ErrNoKey, f.String())
	case f.bits != 0 && f.Permute == nil:
		return fmt.Errorf("%w: format %q needs a key", ErrNoKey, f.String())
	case f.bits != 0 && f.Permute.Bits() != f.bits:
		return fmt.Errorf("%w: format %q: permutation is %d bits wide, want %d", ErrNoKey, f.String(), f.Permute.Bits(), f.bits)
	}
	return nil
}

// Text returns f without its feistel stage: the text stage alone, for
// IDs that were permuted already.
func (f Format) Text() Format {
	f.bits, f.Permute = 0, nil
	return f
}

// String returns the canonical spec of f: stages and options in a fixed
// order, default options left out. ParseFormat(f.String()) gives f back
// (without Permute).
func (f Format) String() string {
	text := "decimal"
	switch {
	case f.digits != nil:
		text = f.digits.spec()
	case f.sqids != nil:
		text = f.sqids.spec()
	}
	if f.bits == 0 {
		return text
	}
	return "feistel:bits=" + strconv.Itoa(f.bits) + "+" + text
}

// Encode returns the string form of v. It returns an error wrapping
// idforge.ErrInvalidArgument when v is negative or, with a feistel stage,
// not below 2^Bits(); ErrNoKey when Validate fails.
func (f Format) Encode(v int64) (string, error) {
	var buf [MaxMinLength]byte
	out, err := f.AppendEncode(buf[:0], v)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// AppendEncode appends the string form of v to dst, as Encode; for every
// text stage but sqids it does not allocate when dst has room.
func (f Format) AppendEncode(dst []byte, v int64) ([]byte, error) {
	if err := f.Validate(); err != nil {
		return dst, err
	}
	if v < 0 {
		return dst, fmt.Errorf("%w: format %q: cannot encode negative %d", idforge.ErrInvalidArgument, f.String(), v)
	}
	if f.Permute != nil {
		var err error
		if v, err = f.Permute.Encode(v); err != nil {
			return dst, err
		}
	}
	switch {
	case f.digits != nil:
		return f.digits.appendEncode(dst, uint64(v)), nil
	case f.sqids != nil:
		s, err := f.sqids.q.Encode(v)
		return append(dst, s...), err
	}
	return strconv.AppendInt(dst, v, 10), nil
}

// Decode returns the ID whose string form is s. Only the exact string
// Encode produces is accepted. It returns an error wrapping
// idforge.ErrInvalidArgument for anything else, and ErrNoKey when Validate
// fails.
func (f Format) Decode(s string) (int64, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	var v uint64
	var err error
	switch {
	case f.digits != nil:
		v, err = f.digits.decode(s)
	case f.sqids != nil:
		var n int64
		n, err = f.sqids.q.Decode(s)
		v = uint64(n)
	default:
		v, err = decimal.decode(s)
	}
	if err != nil {
		return 0, err
	}
	if f.Permute == nil {
		return int64(v), nil
	}
	if v > uint64(f.Permute.Max()) {
		return 0, fmt.Errorf("%w: format %q: %s is not an ID of this format", idforge.ErrInvalidArgument, f.String(), clip(s))
	}
	return f.Permute.Decode(int64(v))
}

// decimal is the zero Format's text stage.
var decimal = func() digits {
	d, err := newDigits("decimal", decimalAlphabet, 0)
	if err != nil {
		panic(err)
	}
	return d
}()

// spec writes the digits stage the way ParseFormat reads it.
func (d *digits) spec() string {
	var opts []string
	if d.min != 0 {
		opts = append(opts, "min="+strconv.Itoa(d.min))
	}
	if d.name == "base62" && d.alphabet != DefaultBase62Alphabet {
		opts = append(opts, "alphabet="+d.alphabet)
	}
	return withOptions(d.name, opts)
}

// sqidsStage is the sqids text stage and the options it was read from.
type sqidsStage struct {
	q           *Sqids
	alphabet    string
	min         int
	noBlocklist bool
}

func (st *sqidsStage) spec() string {
	var opts []string
	if st.min != 0 {
		opts = append(opts, "min="+strconv.Itoa(st.min))
	}
	if st.alphabet != "" && st.alphabet != DefaultSqidsAlphabet {
		opts = append(opts, "alphabet="+st.alphabet)
	}
	if st.noBlocklist {
		opts = append(opts, "blocklist=none")
	}
	return withOptions("sqids", opts)
}

func withOptions(name string, opts []string) string {
	if len(opts) == 0 {
		return name
	}
	return name + ":" + strings.Join(opts, ",")
}
