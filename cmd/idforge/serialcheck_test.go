package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// idforge serial check refuses, with exit status 1 and the reason, every
// template that could issue the same serial twice, and a template it
// cannot parse; it answers 2 only when the command itself is misused.
func TestSerialCheckRefusesWhatCanRepeat(t *testing.T) {
	e := env(map[string]string{"IDFORGE_DATA": t.TempDir()})
	for _, tc := range []struct {
		template string
		mention  []string
	}{
		{"JUSTTEXT", []string{"template refused", "col 1", "no counter", "@{seq:KEY}"}},
		{"R@{random:4}", []string{"no counter", "random characters"}},
		{"@{date:yyyyMMddHHmmss}", []string{"no counter"}},
		{"@{param:shop}@{seq:order}", []string{"col 14", "seq:order", "param part at col 1", "width="}},
		{"@{seq:order,width=3,pad=1}", []string{"pad=1", "ambiguous"}},
		{"AB@{date:qq}", []string{"col 10", "unknown pattern letter"}},
	} {
		code, out, stderr := runCmd(t, e, "serial", "check", tc.template)
		if code != 1 || out != "" {
			t.Errorf("serial check %q: exit %d, stdout %q; want 1 and nothing on stdout", tc.template, code, out)
		}
		for _, m := range tc.mention {
			if !strings.Contains(stderr, m) {
				t.Errorf("serial check %q: %q does not mention %q", tc.template, stderr, m)
			}
		}
	}
	for _, args := range [][]string{{"serial", "check"}, {"serial", "check", "a", "b"}, {"serial", "check", "--tz", "Mars/Olympus", "X@{seq:k}"}} {
		if code, _, stderr := runCmd(t, e, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d %q, want 2", args, code, stderr)
		}
	}
	code, out, stderr := runCmd(t, e, "serial", "check", "QJ@{seq:qj,width=6}")
	if code != 0 || !strings.Contains(out, "unique by: #1 seq:qj") || !strings.Contains(out, "example: QJ000001") {
		t.Fatalf("serial check of a unique template: %d %q %q", code, out, stderr)
	}
}

// A serial in the config file that could repeat stops the node from
// starting: exit status 2 (a configuration error) and the reason, from
// serve and from the one-shot commands alike.
func TestConfigSerialThatCanRepeat(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(file, []byte(`
[[serials]]
name = "static"
template = "JUSTTEXT"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{{"serve", "--http", "127.0.0.1:0"}, {"serial", "static"}} {
		var out, errOut strings.Builder
		code := run(ctx, args, &out, &errOut, e)
		stderr := errOut.String()
		if code != 2 || !strings.Contains(stderr, `config serial "static"`) || !strings.Contains(stderr, "no counter") {
			t.Errorf("%q with a repeating config serial: exit %d, stderr %q; want 2 naming the serial and the problem", args, code, stderr)
		}
	}
}
