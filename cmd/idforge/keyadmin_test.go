package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// keys update and keys retire on the default store (SQLite in the data
// directory): a retired key issues nothing and its name is refused.
func TestKeysUpdateRetire(t *testing.T) {
	e := env(map[string]string{"IDFORGE_DATA": t.TempDir()})
	if code, _, stderr := runCmd(t, e, "keys", "create", "order", "--step", "10"); code != 0 {
		t.Fatalf("keys create: %q", stderr)
	}
	code, out, stderr := runCmd(t, e, "keys", "update", "order", "--step", "20", "--description", "orders", "--max-step", "500")
	if code != 0 || !strings.Contains(out, "step 20, min_step 0, max_step 500") {
		t.Fatalf("keys update: %d %q %q", code, out, stderr)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"keys", "update", "order"}, "nothing to change"},
		{[]string{"keys", "update", "order", "--step", "0"}, "out of range"},
		{[]string{"keys", "update", "order", "--min-step", "900"}, "above max_step"},
		{[]string{"keys", "update", "nope", "--step", "5"}, "nope"},
		{[]string{"keys", "retire", "nope"}, "nope"},
	} {
		if code, _, stderr := runCmd(t, e, c.args...); code == 0 || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: %d %q, want a failure saying %q", c.args, code, stderr, c.says)
		}
	}
	if code, out, _ := runCmd(t, e, "next", "order", "-n", "2"); code != 0 || out != "1\n2\n" {
		t.Fatalf("next: %d %q", code, out)
	}
	if code, out, stderr := runCmd(t, e, "keys", "retire", "order"); code != 0 || !strings.Contains(out, `retired key "order"`) {
		t.Fatalf("keys retire: %d %q %q", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, e, "next", "order"); code == 0 || !strings.Contains(stderr, "retired") {
		t.Fatalf("next after retire: %d %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, e, "keys", "create", "order"); code == 0 || !strings.Contains(stderr, "retired") {
		t.Fatalf("keys create of a retired name: %d %q", code, stderr)
	}
	if code, out, _ := runCmd(t, e, "keys", "retire", "order"); code != 0 {
		t.Fatalf("retiring again: %d %q", code, out)
	}
	// keys list says which keys are retired (issue 24, item 8).
	if code, _, stderr := runCmd(t, e, "keys", "create", "bill"); code != 0 {
		t.Fatalf("keys create bill: %q", stderr)
	}
	code, out, _ = runCmd(t, e, "keys", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	column := slices.Index(strings.Fields(lines[0]), "STATUS")
	status := map[string]string{}
	for _, line := range lines[1:] {
		if f := strings.Fields(line); column > 0 && len(f) > column {
			status[f[0]] = f[column]
		}
	}
	if code != 0 || status["order"] != "retired" || status["bill"] != "live" {
		t.Fatalf("keys list: %d %q; want order retired and bill live", code, out)
	}
}

// The fingerprint guard in the command: a changed balanced composition,
// expansion, key format secret or layout is refused at start with the
// reason and the safe migration; the unchanged configuration runs.
func TestFingerprintRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "seq.db")
	member := func(name string) string { return `"sqlrow+sqlite://` + db + `?name=` + name + `&create=true"` }
	files := 0
	config := func(balance string, expand int, secretVar, layout string) string {
		files++
		file := filepath.Join(dir, fmt.Sprintf("c%d.toml", files))
		os.WriteFile(file, []byte(`
[snowflake]
layout = "`+layout+`"
[[sources]]
name = "ha"
balance = [`+balance+`]
expand = `+strconv.Itoa(expand)+`
[[keys]]
name = "secret"
format = "feistel:bits=40+base62:min=7"
format_key = "env:`+secretVar+`"
`), 0o600)
		return file
	}
	run := func(file string) (int, string) {
		e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file,
			"K1": "a key of sixteen+ bytes", "K2": "another key, 16+ bytes"})
		code, _, stderr := runCmd(t, e, "next", "ha", "-n", "3")
		return code, stderr
	}
	good := member("a") + ", " + member("b")
	if code, stderr := run(config(good, 3, "K1", "twitter")); code != 0 {
		t.Fatalf("first run: %d %q", code, stderr)
	}
	for name, c := range map[string]struct {
		file string
		says string
	}{
		"members swapped": {config(member("b")+", "+member("a"), 3, "K1", "twitter"), `source "ha"`},
		"expansion bits":  {config(good, 2, "K1", "twitter"), "expanded by 2 bits"},
		"format secret":   {config(good, 3, "K2", "twitter"), `format "secret"`},
		"layout":          {config(good, 3, "K1", "sonyflake"), "keep the layout"},
	} {
		code, stderr := run(c.file)
		if code == 0 || !strings.Contains(stderr, "unsafe change") || !strings.Contains(stderr, c.says) {
			t.Errorf("%s: %d %q, want a refusal saying %q", name, code, stderr, c.says)
		}
	}
	if code, stderr := run(config(good, 3, "K1", "twitter")); code != 0 {
		t.Fatalf("the unchanged configuration: %d %q", code, stderr)
	}
}
