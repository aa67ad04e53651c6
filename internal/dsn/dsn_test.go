package dsn

import (
	"errors"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestRedacted(t *testing.T) {
	for raw, secret := range map[string]string{
		"mysql://root:hunter2@db:3306/ids":                                                  "hunter2",
		"mysql://root:hunter2@h1:3306,h2:3306/ids":                                          "hunter2",
		"postgres://u@db/ids?password=hunter2":                                              "hunter2",
		"redisseg://:redispw@r:6379/0?store=" + url.QueryEscape("mysql://u:hunter2@db/ids"): "hunter2",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		got := Redacted(u)
		if strings.Contains(got, secret) || strings.Contains(got, "redispw") {
			t.Errorf("Redacted(%q) = %q still holds a password", raw, got)
		}
	}
}

func TestRedactedHidesEveryPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://u@db/ids?PASSWORD=hunter2",
		"postgres://u@db/ids?sslpassword=hunter2",
		"redisseg://r/0?store=" + url.QueryEscape("postgres://db/ids?password=hunter2"),
		"redisseg://r/0?store=" + url.QueryEscape("mysql://u:hunter2@db:port/ids"), // does not parse
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Redacted(u); strings.Contains(got, "hunter2") {
			t.Errorf("Redacted(%q) = %q still holds the password", raw, got)
		}
	}
	if got := RedactedString("mysql://u:hunter2@db:port/ids"); strings.Contains(got, "hunter2") {
		t.Errorf("RedactedString of an unparsable URL = %q", got)
	}
}

func TestQuery(t *testing.T) {
	u, _ := url.Parse("x://u:hunter2@h/p?n=5&d=2s&b=true&s=a&s=b&l=a,,b&l=c&driver=1")
	q := NewQuery(u, "x URL")
	if n := q.Int("n", 1, 1, 10); n != 5 {
		t.Errorf("Int = %d", n)
	}
	if d := q.Duration("d", 0, time.Millisecond); d != 2*time.Second {
		t.Errorf("Duration = %v", d)
	}
	if !q.Bool("b", false) || q.String("s", "") != "b" || q.String("absent", "def") != "def" {
		t.Error("Bool, String or a default is wrong")
	}
	if l := q.List("l"); strings.Join(l, " ") != "a b c" {
		t.Errorf("List = %q", l)
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if rest := q.Rest(); len(rest) != 1 || rest.Get("driver") != "1" {
		t.Errorf("Rest = %v", rest)
	}
	err := q.Done()
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), `unknown parameter "driver"`) ||
		!strings.Contains(err.Error(), "known: n, d, b, s, absent, l") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Done = %v", err)
	}
}

func TestQueryRefusesBadValues(t *testing.T) {
	for _, tt := range []struct {
		query string
		read  func(q *Query)
	}{
		{"n=0", func(q *Query) { q.Int("n", 1, 1, 10) }},
		{"n=11", func(q *Query) { q.Int("n", 1, 1, 10) }},
		{"n=x", func(q *Query) { q.Int("n", 1, 1, 10) }},
		{"n=-1", func(q *Query) { q.Int("n", 1, 0, math.MaxInt64) }},
		{"n=0s", func(q *Query) { q.Duration("n", time.Second, time.Nanosecond) }},
		{"n=soon", func(q *Query) { q.Duration("n", time.Second, 0) }},
		{"n=maybe", func(q *Query) { q.Bool("n", false) }},
		{"n=", func(q *Query) { q.NonEmpty("n", "def") }},
		{"n=7", func(q *Query) { q.Func("n", func(string) error { return errors.New("an even number") }) }},
	} {
		u, _ := url.Parse("x://h/p?" + tt.query)
		q := NewQuery(u, "x URL")
		tt.read(q)
		if err := q.Done(); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "parameter n=") {
			t.Errorf("%s: %v, want an error naming the parameter", tt.query, err)
		}
	}
}

// TestQueryRequired: a required parameter that is absent or empty is
// reported by Err and Done, after an invalid value met before it.
func TestQueryRequired(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"x://h?key=k", ""},
		{"x://h", "parameter key is required"},
		{"x://h?key=", "parameter key is required"},
		{"x://h?start=0", "parameter start="},
	} {
		u, err := url.Parse(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		q := NewQuery(u, "test URL")
		key := q.Required("key")
		q.Int("start", 1, 1, math.MaxInt64)
		for name, err := range map[string]error{"Err": q.Err(), "Done": q.Done()} {
			switch {
			case tt.want == "" && (err != nil || key != "k"):
				t.Errorf("%s: %s = %v, key %q", tt.raw, name, err, key)
			case tt.want != "" && (!errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("%s: %s = %v, want %q", tt.raw, name, err, tt.want)
			}
		}
	}
}
