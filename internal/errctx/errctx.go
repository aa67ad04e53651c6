// Package errctx adds context to an error so that the message names
// idforge once and says what went wrong first. It is shared by the
// command and the packages that assemble a node, which wrap errors of
// idforge's own and of drivers alike.
package errctx

import (
	"fmt"
	"strings"
)

// Prefix begins the message of every error of idforge's own: its
// sentinels, and everything wrapping them.
const Prefix = "idforge: "

// In adds where err happened to it. An error that begins with Prefix is
// one of idforge's own, whose message starts with what went wrong: the
// context goes after it, so that the message names idforge once and the
// reason first. Any other error gets the context in front. Either way the
// result wraps err.
func In(err error, format string, args ...any) error {
	where := fmt.Sprintf(format, args...)
	if strings.HasPrefix(err.Error(), Prefix) {
		return fmt.Errorf("%w (%s)", err, where)
	}
	return fmt.Errorf("%s: %w", where, err)
}
