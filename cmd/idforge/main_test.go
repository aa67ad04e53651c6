package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func runCmd(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "idforge.toml")
	os.WriteFile(file, []byte(`
http = "127.0.0.1:1111"
data = "/from/file"
store = "sqlite:///file.db"
[snowflake]
layout = "sonyflake"
worker = "3"
max_backward_wait = "20ms"
[segment]
target_duration = "10m"
max_step = 5000
[[keys]]
name = "order"
step = 200
[[keys]]
name = "msg"
strategy = "snowflake"
`), 0o600)

	parse := func(getenv func(string) string, args ...string) Config {
		t.Helper()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		nf := newNodeFlags(fs, true)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := nf.load(getenv)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	def := parse(env(nil))
	if def.HTTP != "127.0.0.1:8080" || def.Data != "./idforge-data" || def.Store != "" || def.Snowflake.Layout != "twitter" {
		t.Fatalf("defaults = %+v", def)
	}
	fromFile := parse(env(map[string]string{"IDFORGE_CONFIG": file}))
	if fromFile.HTTP != "127.0.0.1:1111" || fromFile.Snowflake.Layout != "sonyflake" || fromFile.Snowflake.Worker != "3" ||
		time.Duration(fromFile.Snowflake.MaxBackwardWait) != 20*time.Millisecond || fromFile.Segment.MaxStep != 5000 ||
		time.Duration(fromFile.Segment.TargetDuration) != 10*time.Minute || len(fromFile.Keys) != 2 {
		t.Fatalf("from file = %+v", fromFile)
	}
	withEnv := parse(env(map[string]string{"IDFORGE_CONFIG": file, "IDFORGE_HTTP": "127.0.0.1:2222", "IDFORGE_DATACENTER": "4"}))
	if withEnv.HTTP != "127.0.0.1:2222" || withEnv.Data != "/from/file" || withEnv.Snowflake.Datacenter != 4 {
		t.Fatalf("env over file = %+v", withEnv)
	}
	withFlags := parse(env(map[string]string{"IDFORGE_CONFIG": file, "IDFORGE_HTTP": "127.0.0.1:2222"}),
		"--http", "127.0.0.1:3333", "--data", "/from/flag", "--layout", "js-safe")
	if withFlags.HTTP != "127.0.0.1:3333" || withFlags.Data != "/from/flag" || withFlags.Snowflake.Layout != "js-safe" {
		t.Fatalf("flags over env = %+v", withFlags)
	}
	// An explicit --config overrides IDFORGE_CONFIG.
	if got := parse(env(map[string]string{"IDFORGE_CONFIG": "/nonexistent"}), "--config", file); got.HTTP != "127.0.0.1:1111" {
		t.Fatalf("--config over env = %+v", got)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := map[string]string{
		"unknown setting":               `htp = "x"`,
		"unknown section":               "[snowflak]\nlayout = \"twitter\"",
		"bad duration":                  "[snowflake]\nmax_backward_wait = \"soon\"",
		"bad layout":                    "[snowflake]\nlayout = \"time:40,sequence:12\"",
		"bad key":                       "[[keys]]\nname = \"a b\"",
		"duplicate key":                 "[[keys]]\nname = \"a\"\n[[keys]]\nname = \"a\"",
		"bad strategy":                  "[[keys]]\nname = \"a\"\nstrategy = \"uuid\"",
		"snowflake step":                "[[keys]]\nname = \"a\"\nstrategy = \"snowflake\"\nstep = 5",
		"key past int64":                "[[keys]]\nname = \"a\"\nstart = 9223372036854775807",
		"key past format":               "[[keys]]\nname = \"a\"\nstart = 200\nstep = 100\nformat = \"feistel:bits=8\"\nformat_key = \"0123456789abcdef\"",
		"snowflake permuted in 40 bits": "[[keys]]\nname = \"a\"\nstrategy = \"snowflake\"\nformat = \"feistel:bits=40\"\nformat_key = \"0123456789abcdef\"",
		"uuidv7 format":                 "[[keys]]\nname = \"a\"\nstrategy = \"uuidv7\"\nformat = \"hex\"",
		"prefetch share":                "[segment]\nprefetch_at = 1.5",
		"min above max":                 "[segment]\nmin_step = 10\nmax_step = 5",
		"bad log level":                 `log_level = "loud"`,
		"not toml":                      `{"http": "x"}`,
		"wrong value type":              `http = 5`,
		"rejections keys, nothing done": "[rejections]\nkeys = [\"order\"]",
		"rejections of a bad key":       "[rejections]\nlog = true\nkeys = [\"a b\"]",
		"quota of an unknown token":     "[auth]\ntokens = [{ name = \"ops\", token = \"0123456789abcdef0123\", role = \"admin\" }]\n[[quotas]]\nname = \"q\"\nlimit = 5\nper = \"day\"\ntokens = [\"ghost\"]",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.toml")
			os.WriteFile(file, []byte(content), 0o600)
			code, _, stderr := runCmd(t, env(nil), "next", "k", "--config", file, "--data", t.TempDir())
			if code != 2 || !strings.HasPrefix(stderr, "idforge: ") {
				t.Fatalf("exit %d, stderr %q; want 2 and a message", code, stderr)
			}
		})
	}
}

func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"", `http = "127.0.0.1:1"`, "[snowflake]\nlayout = \"twitter,epoch=2020-01-01T00:00:00Z\"\nworker = \"file:///x\"",
		"[[keys]]\nname = \"o\"\nstep = 5\nstart = 9", "[segment]\nprefetch_at = 0.2\nload_timeout = \"2s\"", "a = [1,2", "[x]\n[x]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		cfg := defaultConfig()
		if err := parseConfigFile([]byte(content), &cfg); err != nil {
			return
		}
		if err := cfg.validate(); err != nil {
			if !errors.Is(err, errUsage) {
				t.Fatalf("validate error %v is not a usage error", err)
			}
			return
		}
		for _, k := range cfg.Keys {
			if _, err := k.key(); err != nil {
				t.Fatalf("validated config holds a bad key %+v: %v", k, err)
			}
		}
	})
}

// Keys declared in the config file exist once a node has opened.
func TestConfigDeclaredKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte("[[keys]]\nname = \"invoice\"\nstart = 7000\n[[keys]]\nname = \"evt\"\nstrategy = \"snowflake\"\n"), 0o600)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	if code, out, stderr := runCmd(t, e, "next", "invoice", "-n", "2"); code != 0 || out != "7000\n7001\n" {
		t.Fatalf("next on a declared key: %d %q %q", code, out, stderr)
	}
	if code, out, stderr := runCmd(t, e, "next", "evt"); code != 0 || out == "" {
		t.Fatalf("next on a declared snowflake key: %d %q %q", code, out, stderr)
	}
	// The store is not reset by a second start with the same declaration.
	if code, out, _ := runCmd(t, e, "next", "invoice"); code != 0 || out != "7002\n" {
		t.Fatalf("second run: %d %q", code, out)
	}
	// A declaration that contradicts the store is refused.
	os.WriteFile(file, []byte("[[keys]]\nname = \"invoice\"\nstrategy = \"snowflake\"\n"), 0o600)
	if code, _, stderr := runCmd(t, e, "next", "invoice"); code != 1 || !strings.Contains(stderr, "declared as snowflake") {
		t.Fatalf("conflicting declaration: %d %q", code, stderr)
	}
}

func TestCommands(t *testing.T) {
	data := t.TempDir()
	e := env(map[string]string{"IDFORGE_DATA": data})

	code, out, stderr := runCmd(t, e, "keys", "create", "order", "--step", "10", "--start", "500")
	if code != 0 || !strings.Contains(out, `created segment key "order"`) {
		t.Fatalf("keys create: %d %q %q", code, out, stderr)
	}
	if code, _, stderr = runCmd(t, e, "keys", "create", "order"); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("keys create twice: %d %q", code, stderr)
	}
	if code, _, _ = runCmd(t, e, "keys", "create", "msg", "--strategy", "snowflake"); code != 0 {
		t.Fatal("keys create snowflake failed")
	}
	code, out, stderr = runCmd(t, e, "next", "order", "-n", "3")
	if code != 0 || out != "500\n501\n502\n" || stderr != "" {
		t.Fatalf("next: %d %q %q", code, out, stderr)
	}
	// Nothing is wasted between one-shot runs.
	if code, out, _ = runCmd(t, e, "next", "order"); code != 0 || out != "503\n" {
		t.Fatalf("next again: %d %q", code, out)
	}
	code, out, _ = runCmd(t, e, "next", "msg", "-n", "2")
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 2 || ids[0] >= ids[1] {
		t.Fatalf("next snowflake: %d %q", code, out)
	}
	code, out, _ = runCmd(t, e, "explain", ids[0])
	if code != 0 || !strings.Contains(out, "expires") || !strings.Contains(out, "2080-07-10") || !strings.Contains(out, "worker") {
		t.Fatalf("explain: %d %q", code, out)
	}
	// make is explain's inverse.
	code, out, _ = runCmd(t, e, "make", "--time", "2022-06-28T16:07:40.105Z", "--datacenter", "11", "--worker", "26")
	if code != 0 || out != "1541815603606036480\n" {
		t.Fatalf("make: %d %q", code, out)
	}
	code, out, _ = runCmd(t, e, "make", "--time", "1656432460105", "--datacenter", "11", "--worker", "26")
	if code != 0 || out != "1541815603606036480\n" {
		t.Fatalf("make with unix ms: %d %q", code, out)
	}
	// Vesta's generation method, set in the layout, made and explained.
	code, out, _ = runCmd(t, e, "make", "--layout", "vesta-max-peak,method=2", "--time", "2015-05-22T06:41:04Z", "--worker", "1")
	if code != 0 || out != "2318980523898175489\n" {
		t.Fatalf("make vesta REST: %d %q", code, out)
	}
	code, out, _ = runCmd(t, e, "explain", "--layout", "vesta-max-peak,method=2", "2318980523898175489")
	if code != 0 || !regexp.MustCompile(`method +2 \(REST\)`).MatchString(out) || !regexp.MustCompile(`version +0 \(default\)`).MatchString(out) {
		t.Fatalf("explain vesta REST: %d %q", code, out)
	}
	code, out, _ = runCmd(t, e, "keys", "list")
	if code != 0 || !strings.Contains(out, "order") || !strings.Contains(out, "504") || !strings.Contains(out, "msg") {
		t.Fatalf("keys list: %d %q", code, out)
	}
	if code, out, _ = runCmd(t, e, "layouts"); code != 0 || !strings.Contains(out, "js-safe") || !strings.Contains(out, "4096000") {
		t.Fatalf("layouts: %d %q", code, out)
	}
	if code, out, _ = runCmd(t, e, "migrate"); code != 0 || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate: %d %q", code, out)
	}
	if code, out, _ = runCmd(t, e, "version"); code != 0 || !strings.HasPrefix(out, "idforge ") {
		t.Fatalf("version: %d %q", code, out)
	}

	usage := [][]string{
		{}, {"bogus"}, {"next"}, {"next", "a", "b"}, {"next", "order", "-n", "0"}, {"next", "order", "-n", "x"},
		{"next", "a b"}, {"explain"}, {"explain", "abc"}, {"explain", "-1"}, {"keys"}, {"keys", "drop"},
		{"keys", "create", "x", "--step", "-1"}, {"keys", "create", "x", "--strategy", "uuid"}, {"serve", "extra"},
		{"keys", "create", "x", "--start", "9223372036854775807"}, {"keys", "create", "x", "--start", "9223372036854775000", "--step", "1000"},
		{"next", "order", "--layout", "nonsense"}, {"serve", "--datacenter", "x"},
		{"make"}, {"make", "--time", "yesterday"}, {"make", "--time", "1000"}, {"make", "--time", "1656432460105", "--worker", "32"},
		{"make", "--time", "1656432460105", "extra"},
	}
	for _, args := range usage {
		if code, _, stderr := runCmd(t, e, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
	if code, _, stderr := runCmd(t, e, "next", "nope"); code != 1 || !strings.Contains(stderr, "unknown key") {
		t.Errorf("next on an unknown key: %d %q", code, stderr)
	}
}

func TestSerialCommands(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte(`
[[keys]]
name = "order"
[[counters]]
name = "daily"
url = "sqlite://`+filepath.Join(dir, "counters.db")+`?period=day"
[[serials]]
name = "waybill"
template = "@{date:yyyyMMdd}@{seq:daily,width=5}"
[[serials]]
name = "sn"
template = "SN-@{seq:order,width=6}-@{checksum:mod,of=seq}"
[[serials]]
name = "job"
template = "@{param:area}-@{param:unit,width=4}-@{seq:order,width=5}"
`), 0o600)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	today := time.Now().UTC().Format("20060102")
	if code, out, stderr := runCmd(t, e, "serial", "waybill", "-n", "2"); code != 0 || out != today+"00001\n"+today+"00002\n" {
		t.Fatalf("waybill: %d %q %q", code, out, stderr)
	}
	// The counter lives in its store: the next run goes on.
	if code, out, _ := runCmd(t, e, "serial", "waybill"); code != 0 || out != today+"00003\n" {
		t.Fatalf("waybill again: %d %q", code, out)
	}
	if code, out, _ := runCmd(t, e, "serial", "sn"); code != 0 || out != "SN-000001-9\n" {
		t.Fatalf("sn: %d %q", code, out)
	}
	if code, out, _ := runCmd(t, e, "serial", "job", "--param", "area=010", "--param", "unit=6541"); code != 0 || out != "010-6541-00002\n" {
		t.Fatalf("job: %d %q", code, out)
	}
	for _, args := range [][]string{{"serial"}, {"serial", "job", "--param", "area"}, {"serial", "job", "-n", "0"}, {"serial", "check"}, {"tickets"}, {"tickets", "expand", "--to", "3", "mysql://x/y"}} {
		if code, _, stderr := runCmd(t, e, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d %q, want 2", args, code, stderr)
		}
	}
	if code, _, stderr := runCmd(t, e, "serial", "job", "-n", fmt.Sprint(idforge.MaxCount+1)); code != 2 || !strings.Contains(stderr, fmt.Sprintf("want 1..%d", idforge.MaxCount)) {
		t.Errorf("-n above idforge.MaxCount: exit %d %q, want 2 naming the limit", code, stderr)
	}
	if code, _, stderr := runCmd(t, e, "serial", "job"); code != 2 || !strings.Contains(stderr, "unit") && !strings.Contains(stderr, "area") {
		t.Errorf("missing parameter: %d %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, e, "serial", "nope"); code != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("unknown serial: %d %q", code, stderr)
	}
	// With IDFORGE_CONFIG, serial check sees the configured keys.
	code, out, _ := runCmd(t, e, "serial", "check", "SN-@{seq:order,width=6}-@{checksum:mod,of=seq}")
	if code != 0 || !strings.Contains(out, "max length: 11") || !strings.Contains(out, "example: SN-000001-9") {
		t.Fatalf("serial check: %d %q", code, out)
	}
}

// The example configurations in deploy/ parse and validate.
func TestExampleConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/examples/*.toml")
	more, _ := filepath.Glob("../../deploy/examples/*/*.toml")
	files = append(files, more...)
	if len(files) < 4 {
		t.Fatalf("found only %d example configs", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg := defaultConfig()
		if err := parseConfigFile(data, &cfg); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := cfg.validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A source composed in the config file: two SQLite rows balanced, then
// expanded by 3 bits; it answers as a key.
func TestComposedSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	db := filepath.Join(dir, "seq.db")
	os.WriteFile(file, []byte(`
[[sources]]
name = "ha"
balance = ["sqlrow+sqlite://`+db+`?name=a&create=true", "sqlrow+sqlite://`+db+`?name=b&create=true"]
expand = 3
`), 0o600)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	code, out, stderr := runCmd(t, e, "next", "ha", "-n", "20")
	if code != 0 {
		t.Fatalf("next on a composed source: %d %q", code, stderr)
	}
	seen := map[string]bool{}
	for _, id := range strings.Fields(out) {
		if seen[id] {
			t.Fatalf("duplicate %s in %q", id, out)
		}
		seen[id] = true
	}
	if len(seen) != 20 {
		t.Fatalf("%d IDs: %q", len(seen), out)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[[sources]]\nname = \"x\"\nurl = \"redis://h/0?key=k\"\nbalance = [\"redis://h/0?key=k\"]\n"), 0o600)
	if code, _, stderr := runCmd(t, env(map[string]string{"IDFORGE_DATA": dir, "IDFORGE_CONFIG": bad}), "next", "x"); code != 2 || !strings.Contains(stderr, "either url or balance") {
		t.Fatalf("url and balance: %d %q", code, stderr)
	}
}

// Formats, string strategies and plugins from the config file.
func TestFormatsStrategiesPlugins(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte(`
[[keys]]
name = "order"
format = "base62:min=5"
[[keys]]
name = "secret"
format = "feistel:bits=40+base62:min=7"
format_key = "env:SECRET_KEY"
[[keys]]
name = "trace"
strategy = "ulid"
[[keys]]
name = "hidden"
[[plugins]]
kind = "obfuscate"
keys = ["hidden"]
bits = 32
key = "env:SECRET_KEY"
[[plugins]]
kind = "history"
file = "history.jsonl"
`), 0o600)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file, "SECRET_KEY": "a key of sixteen+ bytes"})
	if code, out, stderr := runCmd(t, e, "next", "order", "-n", "2"); code != 0 || out != "00001\n00002\n" {
		t.Fatalf("order: %d %q %q", code, out, stderr)
	}
	code, out, _ := runCmd(t, e, "next", "secret")
	if code != 0 || len(strings.TrimSpace(out)) < 7 || strings.TrimSpace(out) == "1" {
		t.Fatalf("secret: %d %q", code, out)
	}
	code, out, stderr := runCmd(t, e, "next", "trace")
	if code != 0 || len(strings.TrimSpace(out)) != 26 {
		t.Fatalf("trace: %d %q", code, out)
	}
	// The history plugin, writing to its own file, sees string IDs too.
	history, err := os.ReadFile(filepath.Join(dir, "data", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(history), `"key":"trace","strategy":"ulid","count":1,"first":"`+strings.TrimSpace(out)) {
		t.Fatalf("no history line for the ULID %s (stderr %q):\n%s", strings.TrimSpace(out), stderr, history)
	}
	if !strings.Contains(string(history), `"key":"order","strategy":"segment","count":2,"first":1,"last":2`) {
		t.Fatalf("no history line for order 1..2:\n%s", history)
	}
	if code, out, _ := runCmd(t, e, "next", "hidden"); code != 0 || strings.TrimSpace(out) == "1" {
		t.Fatalf("hidden, obfuscated by the plugin: %d %q", code, out)
	}
	// Without the key's environment variable the node refuses to start.
	delete := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	if code, _, stderr := runCmd(t, delete, "next", "order"); code != 2 || !strings.Contains(stderr, "SECRET_KEY") {
		t.Fatalf("missing key: %d %q", code, stderr)
	}
}

// A date-packed source (the Redis order-number scheme) from the config
// file: its numbers are (yyMMddHHmmss << 14) | count of a per-second
// counter in SQLite, and explain --source reads them back; a source
// whose bits or zone could not be read back is refused.
func TestDatePackedSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte(`
[[sources]]
name = "orders"
date_packed = "sqlite:`+filepath.Join(dir, "counters.db")+`?period=second&tz=Asia/Shanghai"
bits = 14
`), 0o600)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file})
	before := time.Now().Truncate(time.Second)
	code, out, stderr := runCmd(t, e, "next", "orders", "-n", "3")
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 3 {
		t.Fatalf("next: %d %q %q", code, out, stderr)
	}
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	for i, s := range ids {
		id, _ := strconv.ParseInt(s, 10, 64)
		stamp, n := id>>14, id&(1<<14-1)
		at, err := time.ParseInLocation("060102150405", fmt.Sprintf("%012d", stamp), shanghai)
		if err != nil || at.Before(before) || at.After(time.Now()) || n < 1 || n > 3 {
			t.Fatalf("number %d = %s: stamp %d (%v), count %d", i, s, stamp, err, n)
		}
		code, out, _ = runCmd(t, e, "explain", "--source", "orders", "--json", s)
		var got struct {
			Time  time.Time `json:"time"`
			Count int64     `json:"count"`
			Zone  string    `json:"zone"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || !got.Time.Equal(at) || got.Count != n || got.Zone != "Asia/Shanghai" {
			t.Fatalf("explain %s: %d %q", s, code, out)
		}
	}
	// A source defined through the store decodes the same way, through
	// the one decoder the API reads (issuer.ExplainPacked).
	if code, out, stderr := runCmd(t, e, "sources", "create", "waybills", "--bits", "20",
		"--date-packed", "sqlite:"+filepath.Join(dir, "api.db")+"?period=day&tz=UTC"); code != 0 {
		t.Fatalf("sources create: %d %q %q", code, out, stderr)
	}
	code, out, stderr = runCmd(t, e, "next", "waybills")
	if code != 0 {
		t.Fatalf("next waybills: %d %q", code, stderr)
	}
	var got struct {
		Time   time.Time `json:"time"`
		Period string    `json:"period"`
		Count  int64     `json:"count"`
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	code, out, _ = runCmd(t, e, "explain", "--source", "waybills", "--json", strings.TrimSpace(out))
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Period != "day" || got.Count != 1 || !got.Time.Equal(day) && !got.Time.Equal(day.Add(24*time.Hour)) {
		t.Fatalf("explain --source waybills: %d %q; want day %s, count 1", code, out, day)
	}
	if code, _, stderr := runCmd(t, e, "explain", "--source", "nosuch", "5"); code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("explain --source nosuch: %d %q; want exit 1 naming it", code, stderr)
	}
	if code, _, stderr := runCmd(t, e, "explain", "--source", "orders", "1"); code == 0 || !strings.Contains(stderr, "count is 0") && !strings.Contains(stderr, "not a date-packed") {
		t.Fatalf("explain of 1: %d %q", code, stderr)
	}
	for spec, says := range map[string]string{
		`date_packed = "sqlite:x.db?period=second"` + "\nbits = 14":        "tz=",
		`date_packed = "sqlite:x.db?period=second&tz=UTC"` + "\nbits = 24": "bits 24 out of range 1..23",
		`url = "redis://h/0?key=k"` + "\nbits = 14":                        "bits are a date_packed source's",
	} {
		bad := filepath.Join(dir, "bad.toml")
		os.WriteFile(bad, []byte("[[sources]]\nname = \"x\"\n"+spec+"\n"), 0o600)
		if code, _, stderr := runCmd(t, env(map[string]string{"IDFORGE_DATA": dir, "IDFORGE_CONFIG": bad}), "next", "x"); code != 2 || !strings.Contains(stderr, says) {
			t.Errorf("%s: %d %q, want exit 2 saying %q", spec, code, stderr, says)
		}
	}
}
