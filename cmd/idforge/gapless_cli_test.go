package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idforge serial reserve|commit|void|audit on a configuration file's
// gapless serial, on the data directory's SQLite store; each refusal is
// exit status 1 with its reason.
func TestSerialGaplessCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "idforge.toml")
	os.WriteFile(cfg, []byte("[[serials]]\nname = \"inv\"\ntemplate = \"INV-@{seq:n,width=4}\"\ngapless = true\n"), 0o644)
	cli := func(want int, args ...string) string {
		t.Helper()
		args = append([]string{"serial", args[0], "--config", cfg, "--data", dir}, args[1:]...)
		code, out, errOut := runCmd(t, env(nil), args...)
		if code != want {
			t.Fatalf("idforge %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	out := cli(0, "reserve", "inv")
	if !strings.Contains(out, "number=1\nvalue=INV-0001\nstate=reserved") {
		t.Fatalf("reserve: %s", out)
	}
	id := strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "reservation=")
	if out := cli(0, "commit", "inv", id); !strings.Contains(out, "state=committed") {
		t.Fatalf("commit: %s", out)
	}
	if out := cli(1, "void", "inv", id, "typo"); !strings.Contains(out, "already committed") {
		t.Fatalf("void of a committed number: %s", out)
	}
	if out := cli(1, "commit", "inv", "x"); !strings.Contains(out, "unknown reservation") {
		t.Fatalf("commit x: %s", out)
	}
	cli(2, "void", "inv", id)
	if out := cli(0, "audit", "inv"); !strings.Contains(out, "INV-0001  committed") || !strings.Contains(out, "last handed out:  1") {
		t.Fatalf("audit: %s", out)
	}
	if code, _, errOut := runCmd(t, env(nil), "serial", "--config", cfg, "--data", dir, "inv"); code != 1 || !strings.Contains(errOut, "gapless: reserve a number") {
		t.Fatalf("plain issuing: %d %s", code, errOut)
	}
}
