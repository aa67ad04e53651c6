// Package strictjson owns how idforge reads JSON it is sent (request
// bodies, definitions kept in the store): exactly one JSON value, no field
// the destination lacks, and no field given twice. encoding/json alone
// would keep the last of two values silently, and it matches field names
// regardless of case, so "key" and "Key" count as the same field here too.
// A value of the wrong type is named by its field as the API names it,
// never by a Go type.
//
// It also owns how idforge writes JSON it shows (answers, definitions
// kept in the store): Marshal and NewEncoder leave <, > and & as they are,
// so that a URL reads "a=1&b=2", not "a=1\u0026b=2".
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
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
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			if typ.Field == "" {
				return fmt.Errorf("%w: %s: want %s, got %s", idforge.ErrInvalidArgument, what, want(typ.Type), article(typ.Value))
			}
			return fmt.Errorf("%w: %s: field %q: want %s, got %s", idforge.ErrInvalidArgument, what, typ.Field, want(typ.Type), article(typ.Value))
		}
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

// want says what JSON a Go type takes, in the API's words.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return want(t.Elem())
	}
	return "an object"
}

// article puts "a" or "an" before encoding/json's name of a JSON value
// ("number", "string", "array", "object", "bool", "number 1.5").
func article(v string) string {
	if v == "" {
		return "something else"
	}
	if strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

// Marshal returns v's JSON as Decode reads it, with <, > and & left as
// they are (encoding/json writes them as \u003c, \u003e and \u0026).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// NewEncoder returns a json.Encoder writing to w that leaves <, > and &
// as they are. Only a page that puts JSON inside a <script> element needs
// them escaped (server/ui does so itself).
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
