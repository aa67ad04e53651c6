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
		`[1]`:                    "cannot unmarshal",
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
