package httpwire

import (
	"strconv"

	"github.com/idforge/idforge/internal/strictjson"
)

// The hot answers (IDs, Ranges) write their own JSON: encoding/json's
// reflection was a tenth of what a request of GET /v1/ids cost the server
// (bench/peers/cost.sh). Each AppendJSON appends exactly the bytes
// strictjson's Encoder (encoding/json's, leaving <, > and & as they are)
// writes for the value, its newline included (TestAppendJSONMatchesEncoder),
// so the wire does not change.

// AppendJSON appends the JSON of v and a newline, as json.Encoder.Encode
// writes it.
func (v IDs) AppendJSON(b []byte) []byte {
	return appendKeyed(b, v.Key, `,"ids":`, v.IDs, appendString)
}

// AppendJSON appends the JSON of v and a newline, as json.Encoder.Encode
// writes it.
func (v Ranges) AppendJSON(b []byte) []byte {
	return appendKeyed(b, v.Key, `,"ranges":`, v.Ranges, func(b []byte, r IDRange) []byte {
		b = append(b, `{"start":`...)
		b = appendString(b, r.Start)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, r.Count, 10)
		return append(b, '}')
	})
}

// appendKeyed appends {"key":KEY,"NAME":[ITEM,…]} and a newline, field
// being `,"NAME":` and each appending one item; a nil list is null, as
// encoding/json writes it.
func appendKeyed[T any](b []byte, key, field string, list []T, each func([]byte, T) []byte) []byte {
	b = append(b, `{"key":`...)
	b = appendString(b, key)
	b = append(b, field...)
	if list == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for k, item := range list {
			if k > 0 {
				b = append(b, ',')
			}
			b = each(b, item)
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// appendString appends s as a JSON string. IDs and key names are plain
// ASCII, quoted as they are; anything else (a byte encoding/json escapes:
// a control character, '"', '\\', or beyond ASCII) goes through
// strictjson.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := strictjson.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
