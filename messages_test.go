package idforge_test

import (
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// TestKeyNameMessageNamesTheCharacter: a refused name is explained by the
// character the user typed, its position in characters and its code
// point, never by a raw byte shown as if it were a character.
func TestKeyNameMessageNamesTheCharacter(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"订单", "idforge: invalid key name: character 1 '订' (U+8BA2) is not allowed; names use A-Z a-z 0-9 . _ : -"},
		{"order-单", "character 7 '单' (U+5355) is not allowed"},
		{"a/b", "character 2 '/' (U+002F) is not allowed"},
		{"a\xe8", "character 2 (byte 0xE8, which is not UTF-8) is not allowed"},
		// Too long and not ASCII: the characters are the problem, not the
		// 129 bytes they take.
		{strings.Repeat("单", 43), "character 1 '单' (U+5355)"},
		{strings.Repeat("k", idforge.MaxKeyLen+1), "129 characters long, at most 128 allowed"},
	} {
		err := idforge.ValidateKeyName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateKeyName(%q) = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
