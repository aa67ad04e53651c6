// Package placeholder owns the one rewrite of SQL placeholders that the
// SQL-backed sequence sources and worker provider share.
package placeholder

import (
	"strconv"
	"strings"
)

// Numbered turns each '?' of query into $1, $2, … in order, the form
// PostgreSQL wants. The query must not contain a literal '?'.
func Numbered(query string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b.WriteByte(query[i])
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	return b.String()
}
