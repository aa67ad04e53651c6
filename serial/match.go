package serial

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// maxRepeat is the largest count regexp accepts in {n,m}; longer pieces
// are matched with + or *.
const maxRepeat = 1000

// Pattern returns a regular expression, anchored at both ends, that every
// serial the template renders matches: static text as written, and each
// part as a run of the characters it can render, of the length it can
// have (exactly its width when it has a fixed one). A custom part matches
// any text up to its MaxLen. A value the pattern refuses cannot have come
// from the template; one it accepts has the template's shape (the
// pattern does not recompute check characters or dates). Checkers such
// as package verify use it to check served serials against their
// definition.
func (t *Template) Pattern() *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`\A`)
	for _, n := range t.nodes {
		if n.part == nil {
			b.WriteString(regexp.QuoteMeta(n.static))
			continue
		}
		b.WriteString(partPattern(n.part))
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// partPattern is the regular expression of one part's text.
func partPattern(p Part) string {
	var set *[256]bool
	min, max := 1, p.MaxLen()
	switch p := p.(type) {
	case *paramPart:
		s := p.set.has
		if p.pad != 0 {
			s[p.pad] = true
		}
		set = &s
		if p.width > 0 {
			min = p.width
		}
	case *randomPart:
		set, min = &p.set.has, p.n
	case *checksumPart:
		set = digitSet
		if p.algo == algoISO7064 {
			s := *digitSet
			s['X'] = true
			set = &s
		}
	case charser:
		set = p.chars()
	default:
		min = 0
	}
	if f, ok := p.(fixedLener); ok && f.fixedLen() {
		min = max
	}
	return class(set) + repeat(min, max)
}

// class is a character class of the bytes in set; nil, or a set with a
// byte outside ASCII, is any character.
func class(set *[256]bool) string {
	if set == nil {
		return `(?s:.)`
	}
	var b strings.Builder
	b.WriteByte('[')
	for c := range 256 {
		if !set[c] {
			continue
		}
		if c >= 0x80 {
			return `(?s:.)`
		}
		fmt.Fprintf(&b, `\x%02x`, c)
	}
	b.WriteByte(']')
	return b.String()
}

// repeat is the regexp repetition of min to max.
func repeat(min, max int) string {
	switch {
	case min == max && max <= maxRepeat:
		return "{" + strconv.Itoa(max) + "}"
	case max <= maxRepeat:
		return "{" + strconv.Itoa(min) + "," + strconv.Itoa(max) + "}"
	case min == 0:
		return "*"
	}
	return "+"
}
