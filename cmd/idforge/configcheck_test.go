package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config check accepts a valid file with exit 0 and one summary line, and
// opens nothing: no data directory appears, and a store on a server that
// does not exist is not dialled.
func TestConfigCheckValid(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	file := filepath.Join(dir, "idforge.toml")
	os.WriteFile(file, []byte(`
data = "`+data+`"
store = "mysql://idforge:secret@db.invalid:3306/ids"
refresh_keys = "30s"

[snowflake]
worker = "etcd://etcd.invalid:2379/idforge"

[[keys]]
name = "order"

[[keys]]
name = "msg"
strategy = "snowflake"
`), 0o600)
	code, stdout, stderr := runCmd(t, env(nil), "config", "check", file)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := file + ": ok: http 127.0.0.1:8080, data " + data + ", store mysql://idforge:xxxxx@db.invalid:3306/ids, worker etcd://etcd.invalid:2379/idforge, layout twitter, tls off; 2 keys,"
	if !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout %q, want one line beginning %q", stdout, want)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("config check touched the data directory: %v", err)
	}
}

// config check refuses a bad file with exit 2, naming the file, the line,
// the setting and the fix, for syntax, type, unknown-setting and
// semantic errors, and for what serve checks before it listens.
func TestConfigCheckErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		env           map[string]string
		want          string
	}{
		{"misplaced setting", "[snowflake]\nlayout = \"twitter\"\nrefresh_keys = \"60s\"\n", nil,
			`c.toml:3: unknown setting "snowflake.refresh_keys"; fix: refresh_keys is a top-level setting: move it above the first [table]`},
		{"setting of another table", "http = \"127.0.0.1:1\"\nprefetch_at = 0.2\n", nil,
			`c.toml:2: unknown setting "prefetch_at"; fix: prefetch_at belongs under [segment]`},
		{"typo", "\nhtp = \"x\"\n", nil, `c.toml:2: unknown setting "htp"; fix: did you mean http?`},
		{"typo in a table", "[snowflake]\nlayot = \"twitter\"\n", nil, `c.toml:2: unknown setting "snowflake.layot"; fix: did you mean snowflake.layout?`},
		{"bad duration", "[segment]\n\nload_timeout = \"soon\"\n", nil,
			`c.toml:3: segment.load_timeout: time: invalid duration "soon"; fix: write segment.load_timeout as a duration string such as "5ms" or "15m"`},
		{"wrong type", "http = 5\n", nil, `c.toml:1: http: incompatible types`},
		{"syntax", "http = \"x\"\n[keys\n", nil, `c.toml:3: expected '.' or ']' to end table name`},
		{"out of range", "[segment]\nprefetch_at = 1.5\n", nil, `c.toml:2: segment.prefetch_at 1.5 must be in (0, 1)`},
		{"second key", "[[keys]]\nname = \"a\"\n\n[[keys]]\nname = \"a b\"\n", nil, `c.toml:4: invalid key name`},
		{"exposed", "log_level = \"info\"\nhttp = \"0.0.0.0:8080\"\n", nil, `c.toml:2: auth: refusing to serve without authentication on a non-loopback address`},
		{"token from an unset variable", "[auth]\ntokens = [{ name = \"ops\", token = \"env:NOT_SET_HERE\", role = \"admin\" }]\n", nil,
			`c.toml:2: auth: invalid configuration: tokens[0] ("ops"): environment variable NOT_SET_HERE is not set`},
		{"missing certificate", "[tls]\ncert = \"nowhere.crt\"\nkey = \"nowhere.key\"\n", nil, `c.toml:2: auth: TLS certificate nowhere.crt`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.toml")
			os.WriteFile(file, []byte(tc.content), 0o600)
			code, stdout, stderr := runCmd(t, env(tc.env), "config", "check", file)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "idforge: config file "+file) || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	// A flag overrides the file's value: the error is the flag's, not the
	// file's line.
	file := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(file, []byte("[snowflake]\nlayout = \"twitter\"\n"), 0o600)
	code, _, stderr := runCmd(t, env(nil), "config", "check", file, "--layout", "time:40")
	if code != 2 || strings.Contains(stderr, "c.toml:2") {
		t.Fatalf("exit %d, stderr %q; want 2 without the file's line", code, stderr)
	}
	if code, _, stderr := runCmd(t, env(nil), "config", "chek", file); code != 2 || !strings.Contains(stderr, "config check FILE") {
		t.Fatalf("unknown subcommand: exit %d, stderr %q", code, stderr)
	}
}
