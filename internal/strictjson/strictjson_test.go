package strictjson

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

func TestCheckDuplicateFields(t *testing.T) {
	for body, dup := range map[string]string{
		`{"a":1,"b":2}`:                   "",
		`{"a":{"x":1},"b":{"x":1}}`:       "", // the same name in two objects
		`[{"a":1},{"a":1}]`:               "",
		`{"a":[1,{"b":1,"c":[]}],"c":{}}`: "",
		`{"a":1,"a":2}`:                   "a",
		`{"a":{"x":1,"x":2}}`:             "x",
		`{"a":[{"y":1,"y":2}]}`:           "y",
		`{"a":{},"b":[],"a":0}`:           "a",
		`{"ǅ":1,"ǆ":2}`:                   "ǆ", // folded like encoding/json
		`{"a":1}{"a":1,"a":1}`:            "",  // only the first value; the rest is refused elsewhere
		`{"a":1,"a"`:                      "a",
		`{"a":`:                           "",
		`not json`:                        "",
	} {
		err := checkDuplicates([]byte(body), "request body")
		switch {
		case dup == "" && err != nil:
			t.Errorf("%s: %v, want no error", body, err)
		case dup != "" && (!errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), strconv.Quote(dup))):
			t.Errorf("%s: %v, want ErrInvalidArgument naming %q", body, err, dup)
		}
	}
}

func TestDecode(t *testing.T) {
	var v struct{ Key string }
	for body, want := range map[string]string{
		`{"key":"a"}`:            "",
		`{"key":"a","Key":"b"}`:  `field "Key" given twice`,
		`{"nope":1}`:             `unknown field "nope"`,
		`{"key":"a"}{"key":"b"}`: "more than one JSON value",
		`[1]`:                    "want an object, got an array",
		`{"key":5}`:              `want a string, got a number`,
	} {
		err := Decode([]byte(body), &v, "request body")
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case want != "" && (!errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "request body")):
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", body, err, want)
		}
	}
}

// A wrongly typed field is named as the API names it, at any depth, and
// no Go type shows.
func TestDecodeNamesTheField(t *testing.T) {
	type inner struct {
		Limit int64 `json:"limit"`
	}
	var v struct {
		Name   string   `json:"name"`
		Keys   []string `json:"keys"`
		Closed bool     `json:"closed"`
		Spec   inner    `json:"spec"`
		Ratio  *float64 `json:"ratio"`
	}
	for body, want := range map[string]string{
		`{"name":[1]}`:             `field "name": want a string, got an array`,
		`{"keys":"a"}`:             `field "keys": want an array, got a string`,
		`{"keys":[1]}`:             `field "keys": want a string, got a number`,
		`{"closed":"yes"}`:         `field "closed": want true or false, got a string`,
		`{"spec":{"limit":1.5}}`:   `field "spec.limit": want a whole number, got a number 1.5`,
		`{"spec":{"limit":"1"}}`:   `field "spec.limit": want a whole number, got a string`,
		`{"ratio":{}}`:             `field "ratio": want a number, got an object`,
		`{"spec":{"limit":1e400}}`: `field "spec.limit": want a whole number`,
	} {
		err := Decode([]byte(body), &v, "request body")
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), want) ||
			strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "struct") {
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q and no Go type", body, err, want)
		}
	}
}

func TestMarshalKeepsAmpersands(t *testing.T) {
	b, err := Marshal(map[string]string{"url": "redis://h/0?key=a&db=1<2>"})
	if err != nil || string(b) != `{"url":"redis://h/0?key=a&db=1<2>"}` {
		t.Fatalf("Marshal: %s, %v", b, err)
	}
}
