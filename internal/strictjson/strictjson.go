// Package strictjson owns how idforge reads JSON it is sent (request
// bodies, definitions kept in the store): exactly one JSON value, no field
// the destination lacks, and no field given twice. encoding/json alone
// would keep the last of two values silently, and it matches field names
// regardless of case, so "key" and "Key" count as the same field here too.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/idforge/idforge"
)

// Decode decodes b into v strictly (see the package documentation).
// Errors wrap idforge.ErrInvalidArgument, start with what ("request
// body") and name the field.
func Decode(b []byte, v any, what string) error {
	if err := checkDuplicates(b, what); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", idforge.ErrInvalidArgument, what, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: %s holds more than one JSON value", idforge.ErrInvalidArgument, what)
	}
	return nil
}

// checkDuplicates reports an error wrapping idforge.ErrInvalidArgument
// when an object in the first JSON value of body, at any depth, holds two
// fields whose names encoding/json would take for the same one. Malformed
// JSON passes: the decoding that follows reports it with its position.
func checkDuplicates(body []byte, what string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	// One entry per open object or array, innermost last: the names an
	// object has held (nil for an array), and whether its next token is
	// a field name rather than a field's value.
	type level struct {
		names      map[string]bool
		expectName bool
	}
	var open []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if n := len(open); n > 0 && open[n-1].expectName && tok != json.Delim('}') {
			name, _ := tok.(string)
			folded := foldName(name)
			if open[n-1].names[folded] {
				return fmt.Errorf("%w: %s: field %q given twice", idforge.ErrInvalidArgument, what, name)
			}
			open[n-1].names[folded] = true
			open[n-1].expectName = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, level{names: map[string]bool{}, expectName: true})
			continue
		case json.Delim('['):
			open = append(open, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
		}
		// A value ended: the object holding it expects a name next, and
		// at the top level the first value is all there is to check.
		if len(open) == 0 {
			return nil
		}
		if open[len(open)-1].names != nil {
			open[len(open)-1].expectName = true
		}
	}
}

// foldName maps a JSON field name to the form under which
// encoding/json takes two names for the same field: each letter folded to
// one case, so that "key", "Key" and "KEY" meet.
func foldName(name string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, name)
}
