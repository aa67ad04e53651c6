package httpwire

import (
	"bytes"
	"testing"

	"github.com/idforge/idforge/internal/strictjson"
)

// AppendJSON writes exactly what json.Encoder writes, for plain values
// and for strings encoding/json escapes.
func TestAppendJSONMatchesEncoder(t *testing.T) {
	odd := []string{"", "a\"b", `back\slash`, "<tag>&", "tab\there", "nl\n", "\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad\xffutf8"}
	values := []interface{ AppendJSON([]byte) []byte }{
		IDs{Key: "order", IDs: []string{"1", "2", "3"}},
		IDs{Key: "order", IDs: []string{}},
		IDs{Key: "order"},
		IDs{Key: "k<>", IDs: odd},
		Ranges{Key: "order", Ranges: []IDRange{{Start: "1000000", Count: 10000}, {Start: "9223372036854775807", Count: -1}}},
		Ranges{Key: "order", Ranges: []IDRange{}},
		Ranges{Key: "order"},
	}
	for _, s := range odd {
		values = append(values, Ranges{Key: s, Ranges: []IDRange{{Start: s, Count: 1}}}, IDs{Key: s, IDs: []string{s}})
	}
	for _, v := range values {
		var want bytes.Buffer
		if err := strictjson.NewEncoder(&want).Encode(v); err != nil {
			t.Fatal(err)
		}
		if got := v.AppendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("AppendJSON(%#v)\n got %q\nwant %q", v, got, want.Bytes())
		}
	}
}
