package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/dsn"
)

// cmdConfig is `idforge config check FILE [serve's flags]`: the file read,
// merged with the environment and flags and checked exactly as serve
// does before it opens anything, and nothing opened (no store, worker-ID
// coordinator, listener or data directory). Exit 0 with a summary line,
// or 2 with the file, line, setting and fix.
func cmdConfig(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "check" {
		return usageErr("config takes the subcommand check: idforge config check FILE")
	}
	fs := newFlagSet("config check", stderr)
	nf := newNodeFlags(fs, true)
	pos, err := parseArgs(fs, args[1:], 1, "one FILE")
	if err != nil {
		return err
	}
	cfg, err := nf.loadFile(pos[0], getenv)
	if err != nil {
		return err
	}
	if _, _, err := cfg.prepareServe(); err != nil {
		return cfg.inFile(err)
	}
	fmt.Fprintf(stdout, "%s: ok: %s\n", pos[0], cfg.summary())
	return nil
}

// prepareServe makes what serve needs before it listens, from the
// configuration alone: the listen addresses checked, the exposure check
// passed, the tokens and the TLS certificates read.
func (c *Config) prepareServe() (*auth.Authenticator, *tls.Config, error) {
	if err := checkListenAddr("http", c.HTTP); err != nil {
		return nil, nil, err
	}
	if c.GRPC != "" {
		if err := checkListenAddr("grpc", c.GRPC); err != nil {
			return nil, nil, err
		}
	}
	// Nothing is open by default on a non-loopback address.
	authCfg := auth.FromEnv(c.Auth)
	for _, l := range [][2]string{{"http", c.HTTP}, {"grpc", c.GRPC}} {
		if l[1] == "" {
			continue
		}
		if err := auth.CheckExposure(l[1], authCfg.Configured()); err != nil {
			return nil, nil, inSetting(l[0], err)
		}
	}
	var authn *auth.Authenticator
	if authCfg.Configured() {
		var err error
		if authn, err = auth.New(authCfg); err != nil {
			return nil, nil, inSetting("auth.tokens", err)
		}
	}
	if c.TLS.Cert == "" && c.TLS.Key == "" {
		return authn, nil, nil
	}
	t, err := auth.ServerTLS(c.TLS.Cert, c.TLS.Key, c.TLS.ClientCA)
	if err != nil {
		return nil, nil, inSetting("tls.cert", err)
	}
	return authn, t, nil
}

// summary is the one line config check prints for a valid configuration.
func (c *Config) summary() string {
	store, worker := "sqlite in the data directory", "the file worker-id in the data directory"
	if c.Store != "" {
		store = dsn.RedactedString(c.Store)
	}
	if c.Snowflake.Worker != "" {
		worker = dsn.RedactedString(c.Snowflake.Worker)
	}
	tlsOn := "off"
	if c.TLS.Cert != "" {
		tlsOn = "on"
	}
	count := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return strconv.Itoa(n) + " " + what + "s"
	}
	return fmt.Sprintf("http %s, data %s, store %s, worker %s, layout %s, tls %s; %s, %s, %s, %s, %s, %s, %s",
		c.HTTP, c.Data, store, worker, c.Snowflake.Layout, tlsOn,
		count(len(c.Keys), "key"), count(len(c.Sources), "source"), count(len(c.Counters), "counter"),
		count(len(c.Serials), "serial"), count(len(c.Plugins), "plugin"), count(len(c.Quotas), "quota"),
		count(len(auth.FromEnv(c.Auth).Tokens), "token"))
}

// settingError is a usage error in one setting of the configuration, so
// that loadFile can say on which line of the file it is set.
type settingError struct {
	usageError
	setting string // "refresh_keys", "segment.prefetch_at", "keys[2]"
}

func inSetting(setting string, err error) error {
	return settingError{usageError{err}, setting}
}

// fileError is an error at a line of the config file.
type fileError struct {
	path string
	line int    // 0: unknown
	err  error  // what is wrong
	fix  string // how to fix it, or ""
}

func (e fileError) Error() string {
	at := e.path
	if e.line > 0 {
		at += ":" + strconv.Itoa(e.line)
	}
	msg := "config file " + at + ": " + strings.TrimPrefix(e.err.Error(), prefix)
	if e.fix != "" {
		msg += "; fix: " + e.fix
	}
	return msg
}

func (e fileError) Unwrap() error        { return e.err }
func (e fileError) Is(target error) bool { return target == errUsage }

// inFile places err, from parsing or checking the file at path, in it.
func inFile(path string, err error) error {
	var fe fileError
	if errors.As(err, &fe) {
		fe.path = path
		return fe
	}
	return fileError{path: path, err: err}
}

var tomlLine = regexp.MustCompile(`^toml: line (\d+)(?: \(last key "([^"]*)"\))?: `)

// decodeError is a TOML syntax or type error with its line and setting.
func decodeError(data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		fe := fileError{line: pe.Position.Line, err: errors.New(pe.Message)}
		if pe.LastKey != "" {
			fe.err = fmt.Errorf("%s: %s", pe.LastKey, pe.Message)
			fe.fix = fixValue(pe.LastKey)
		}
		return fe
	}
	if m := tomlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := strings.TrimPrefix(err.Error(), m[0])
		if m[2] != "" {
			msg = m[2] + ": " + msg
		}
		return fileError{line: line, err: errors.New(msg), fix: fixValue(m[2])}
	}
	return err
}

// fixValue says what kind of value setting takes.
func fixValue(setting string) string {
	t, ok := knownSettings()[setting]
	if !ok {
		return ""
	}
	return "write " + setting + " as " + t
}

// unknownSetting is the error for a setting no field takes, with the
// setting it probably is.
func unknownSetting(data []byte, key toml.Key) error {
	name := key.String()
	fe := fileError{line: lineOf(data, key), err: fmt.Errorf("unknown setting %q", name)}
	known := knownSettings()
	table, last := strings.Join(key[:len(key)-1], "."), key[len(key)-1]
	var elsewhere []string
	for k := range known {
		if k == last || strings.HasSuffix(k, "."+last) {
			elsewhere = append(elsewhere, k)
		}
	}
	slices.Sort(elsewhere)
	switch {
	case len(elsewhere) > 0 && !strings.Contains(elsewhere[0], "."):
		fe.fix = fmt.Sprintf("%s is a top-level setting: move it above the first [table]", last)
	case len(elsewhere) > 0:
		fe.fix = fmt.Sprintf("%s belongs under [%s]", last, strings.TrimSuffix(elsewhere[0], "."+last))
	default:
		var near []string
		for k := range known {
			kt, kl := "", k
			if i := strings.LastIndexByte(k, '.'); i >= 0 {
				kt, kl = k[:i], k[i+1:]
			}
			if kt == table && editDistance(kl, last) <= 2 || table != "" && editDistance(k, name) <= 2 {
				near = append(near, k)
			}
		}
		slices.Sort(near)
		if len(near) > 0 {
			fe.fix = "did you mean " + strings.Join(near, " or ") + "?"
		} else {
			fe.fix = "see docs/configuration.md for every setting"
		}
	}
	return fe
}

// inFile places a setting error at the line of the config file that
// sets it, unless the environment or a flag set it instead.
func (c *Config) inFile(err error) error {
	var se settingError
	if c.file == "" || !errors.As(err, &se) || c.overridden[se.setting] {
		return err
	}
	return inFile(c.file, settingAt(c.fileData, se))
}

// settingAt places a setting error at the line the file sets it.
func settingAt(data []byte, se settingError) error {
	fe := fileError{err: se.err}
	setting, index := se.setting, -1
	if i := strings.IndexByte(setting, '['); i >= 0 {
		index, _ = strconv.Atoi(strings.TrimSuffix(setting[i+1:], "]"))
		setting = setting[:i]
	}
	if index >= 0 {
		fe.line = tableLine(data, setting, index)
	} else {
		fe.line = lineOf(data, toml.Key(strings.Split(setting, ".")))
	}
	return fe
}

var (
	tomlTable = regexp.MustCompile(`^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?`)
	tomlKey   = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+)\s*=`)
)

// lineOf is the line of the file that sets key (0: not found), read as
// TOML's tables and keys are written in the files people write: one
// setting a line, tables named by headers.
func lineOf(data []byte, key toml.Key) int {
	want := key.String()
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := tomlTable.FindStringSubmatch(line); m != nil {
			table = m[2]
			if table == want {
				return i + 1
			}
			continue
		}
		if m := tomlKey.FindStringSubmatch(line); m != nil {
			full := m[1]
			if table != "" {
				full = table + "." + full
			}
			if full == want {
				return i + 1
			}
		}
	}
	return 0
}

// tableLine is the line of the header of the index-th [[name]] table.
func tableLine(data []byte, name string, index int) int {
	for i, line := range strings.Split(string(data), "\n") {
		if m := tomlTable.FindStringSubmatch(line); m != nil && m[1] == "[[" && m[2] == name {
			if index == 0 {
				return i + 1
			}
			index--
		}
	}
	return 0
}

// knownSettings maps every setting the file takes, by its dotted name
// (arrays of tables without an index: "keys.name"), to the TOML type it
// is written as. It is read from Config's toml tags.
func knownSettings() map[string]string {
	out := map[string]string{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			full := prefix + name
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[duration]():
				out[full] = "a table"
				walk(full+".", ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				out[full] = "an array of tables"
				walk(full+".", ft.Elem())
			default:
				out[full] = tomlType(ft)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	return out
}

// tomlType names how a value of Go type t is written in TOML.
func tomlType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[duration]():
		return `a duration string such as "5ms" or "15m"`
	case t.Kind() == reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(tomlType(t.Elem()), "a "), "an ") + "s"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	default:
		return "an integer"
	}
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
