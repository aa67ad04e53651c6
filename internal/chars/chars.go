// Package chars names a character that a rule refuses the way a person
// reads it: its position counted in characters, the character itself and
// its code point. A message that shows a raw byte instead ("byte 0 is
// 'è'" for the first byte of "订") names a character the user never typed.
package chars

import (
	"fmt"
	"unicode/utf8"
)

// Refused is the first character of a string that a rule refuses.
type Refused struct {
	// Pos is the character's position, counting characters (not bytes)
	// from 1.
	Pos int
	// Char is the character; utf8.RuneError when the bytes at Pos are not
	// UTF-8.
	Char rune
	// NotUTF8 holds the byte at Pos when it does not begin valid UTF-8.
	NotUTF8 bool
	// Byte is that byte, when NotUTF8.
	Byte byte
}

// String describes the character: "character 1 '订' (U+8BA2)", or
// "character 3 (byte 0xE8, which is not UTF-8)".
func (r Refused) String() string {
	if r.NotUTF8 {
		return fmt.Sprintf("character %d (byte 0x%02X, which is not UTF-8)", r.Pos, r.Byte)
	}
	return fmt.Sprintf("character %d %q (%U)", r.Pos, r.Char, r.Char)
}

// FirstRefused returns the first character of s that allowed refuses,
// and false when it allows them all. Bytes that are not UTF-8 are always
// refused.
func FirstRefused(s string, allowed func(rune) bool) (Refused, bool) {
	pos := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		pos++
		if c == utf8.RuneError && size == 1 {
			return Refused{Pos: pos, Char: c, NotUTF8: true, Byte: s[i]}, true
		}
		if !allowed(c) {
			return Refused{Pos: pos, Char: c}, true
		}
		i += size
	}
	return Refused{}, false
}
