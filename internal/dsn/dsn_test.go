package dsn

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	for raw, secret := range map[string]string{
		"mysql://root:hunter2@db:3306/ids":                                                  "hunter2",
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
