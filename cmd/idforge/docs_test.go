package main

// The documentation is the contract: every example in README*.md and
// docs/**/*.md is executed here, so a changed flag, setting or answer
// fails the test that the README's test command runs.
//
//   - ```toml: a complete config file, checked by idforge config check
//     (in-process, the same loadFile and prepareServe serve uses). A
//     block fenced ```toml fragment [table] is checked under that table
//     header. Tokens written env:NAME get a value of their own; files the
//     block names (tls.crt, tls.key, ca.crt) exist in the directory it is
//     checked in.
//   - ```sh run: shell commands run one by one, in document order, in a
//     directory of the document's own, against a fresh node listening
//     where the document says localhost:8080 (started by the first block
//     that names it; ```sh run offline stops it first, for the commands
//     that open the data directory themselves). A command's trailing
//     comment is its answer, compared with the output, its white space
//     collapsed: <id> stands for a number, <time> for a time, … for
//     anything. A command ending in & runs in the background until the
//     document is done; the test waits for its --http address. go run
//     ./cmd/idforge and idforge run the binary built for the tests, and
//     go build -o X ./cmd/idforge copies it. curl fails on an HTTP error
//     unless the answer shown is one. ```sh run mysql and ```sh run
//     postgres need that server (skipped without it, failed under
//     CI=true) and get a database of their own in place of the one the
//     document names (idforge_demo). Loopback ports 8080-8099 and
//     9090-9099 become free ports of the test's.
//   - ```go: a part of a godoc Example (a func Example… in a _test.go
//     file of the module), so it compiles and runs with the tests.
//
// The Chinese twins (docs/zh-CN, README.zh-CN.md) hold the same examples
// byte for byte (TestDocsTranslationsInStep in the root package); their
// config blocks are checked here too, their shell examples are not run
// twice.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testca"
	"github.com/idforge/idforge/internal/testsvc"
)

// repoRoot is the module's root, seen from this package's directory.
const repoRoot = "../.."

// docBlock is one fenced code block of a Markdown file.
type docBlock struct {
	file string   // relative to the repository root
	line int      // of the opening fence
	info []string // the words after ```
	text string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docFiles lists README*.md and docs/**/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, "README*.md"))
	filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	for i, f := range files {
		files[i], _ = filepath.Rel(repoRoot, f)
	}
	slices.Sort(files)
	return files
}

// readBlocks returns the fenced code blocks of a Markdown file.
func readBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(repoRoot, file)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docBlock{file: file, line: i + 1, info: strings.Fields(strings.TrimPrefix(line, "```"))}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return blocks
}

func (b docBlock) is(words ...string) bool {
	return len(b.info) >= len(words) && slices.Equal(b.info[:len(words)], words)
}

var envToken = regexp.MustCompile(`env:([A-Z_][A-Z0-9_]*)`)

// TestDocsConfigBlocks: every ```toml block of the documentation passes
// idforge config check.
func TestDocsConfigBlocks(t *testing.T) {
	files := docFiles(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := testca.New(t, "docs")
	cert, key := ca.Issue(t, 2, true)
	testca.WriteFile(t, dir, "tls.crt", cert)
	testca.WriteFile(t, dir, "tls.key", key)
	testca.WriteFile(t, dir, "ca.crt", ca.PEM)
	t.Chdir(dir)
	n := 0
	for _, file := range files {
		for _, b := range readBlocks(t, filepath.Join(root, file)) {
			b.file = file
			if !b.is("toml") {
				continue
			}
			n++
			t.Run(b.String(), func(t *testing.T) {
				text := b.text
				if b.is("toml", "fragment") && len(b.info) > 2 {
					text = strings.Join(b.info[2:], " ") + "\n" + text
				}
				for _, m := range envToken.FindAllStringSubmatch(text, -1) {
					t.Setenv(m[1], randomToken())
				}
				path := filepath.Join(t.TempDir(), "idforge.toml")
				os.WriteFile(path, []byte(text), 0o600)
				code, stdout, stderr := runCmd(t, env(nil), "config", "check", path)
				if code != 0 {
					t.Errorf("%s: idforge config check: exit %d\n%s%s\nthe block:\n%s", b, code, stdout, stderr, text)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no toml block found in the documentation")
	}
}

func randomToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TestDocsGoBlocks: every ```go block of the documentation is a part of
// a godoc Example, which go vet compiles and go test runs.
func TestDocsGoBlocks(t *testing.T) {
	var examples []string
	filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err == nil && bytes.Contains(raw, []byte("\nfunc Example")) {
			examples = append(examples, squash(string(raw)))
		}
		return nil
	})
	for _, file := range docFiles(t) {
		for _, b := range readBlocks(t, file) {
			if !b.is("go") {
				continue
			}
			want := squash(b.text)
			if !slices.ContainsFunc(examples, func(ex string) bool { return strings.Contains(ex, want) }) {
				t.Errorf("%s: this Go block is not part of any godoc Example (func Example… in a _test.go file); copy it from one, or add one:\n%s", b, b.text)
			}
		}
	}
}

// squash is Go source with each line's indentation and the blank lines
// removed, for finding a snippet in a file whatever its indentation.
func squash(src string) string {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return "\n" + strings.Join(out, "\n") + "\n"
}

// TestDocsShellExamples runs every ```sh run block of the English
// documentation, each document against a node of its own.
func TestDocsShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary: not with -short")
	}
	for _, file := range docFiles(t) {
		if strings.Contains(file, "zh-CN") {
			continue
		}
		var runnable []docBlock
		for _, b := range readBlocks(t, file) {
			if b.is("sh", "run") {
				runnable = append(runnable, b)
			}
		}
		if len(runnable) == 0 {
			continue
		}
		t.Run(file, func(t *testing.T) {
			d := newDocRun(t)
			for _, b := range runnable {
				if t.Failed() {
					return
				}
				d.block(b)
			}
		})
	}
}

// docRun runs one document's shell examples.
type docRun struct {
	t     *testing.T
	dir   string
	bin   string
	env   []string
	ports map[string]string // document port → the test's
	node  *e2e.Node
	subst []string // old, new: the document's database URL and name → the test's
}

func newDocRun(t *testing.T) *docRun {
	d := &docRun{t: t, dir: t.TempDir(), bin: e2e.Binary(t), ports: map[string]string{}}
	// curl fails on an HTTP error status (but still shows the answer).
	os.WriteFile(filepath.Join(d.dir, ".curlrc"), []byte("silent\nfail-with-body\n"), 0o600)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDFORGE_") && !strings.HasPrefix(kv, "CURL_HOME=") && !strings.HasPrefix(kv, "PATH=") {
			d.env = append(d.env, kv)
		}
	}
	d.env = append(d.env, "CURL_HOME="+d.dir, "PATH="+filepath.Dir(d.bin)+":"+os.Getenv("PATH"))
	return d
}

var docPort = regexp.MustCompile(`(localhost|127\.0\.0\.1):(80[89]\d|909\d)\b`)

// local rewrites the document's loopback ports to the test's.
func (d *docRun) local(s string) string {
	return docPort.ReplaceAllStringFunc(s, func(m string) string {
		host, port, _ := net.SplitHostPort(m)
		if d.ports[port] == "" {
			d.ports[port] = freePort(d.t)
		}
		return host + ":" + d.ports[port]
	})
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// docDatabase is the database name the documentation's cluster examples use.
const docDatabase = "idforge_demo"

func (d *docRun) block(b docBlock) {
	t := d.t
	switch {
	case b.is("sh", "run", "offline"):
		if d.node != nil {
			if err := d.node.Terminate(); err != nil {
				t.Fatalf("%s: stopping the document's node: %v", b, err)
			}
			d.node = nil
		}
	case b.is("sh", "run", "mysql"), b.is("sh", "run", "postgres"):
		url := testsvc.MySQL(t)
		docURL := "mysql://root@127.0.0.1:3306/" + docDatabase
		if b.info[2] == "postgres" {
			url = testsvc.Postgres(t)
			docURL = "postgres://postgres@127.0.0.1:5432/" + docDatabase + "?sslmode=disable"
		}
		name := url[strings.LastIndexByte(url, '/')+1:]
		name, _, _ = strings.Cut(name, "?")
		d.subst = append(d.subst, docURL, url, docDatabase, name)
	}
	for _, c := range shellCommands(b.text) {
		if t.Failed() {
			return
		}
		d.command(b, c)
	}
}

// shellCommand is one command of a block and the answer shown beside it.
type shellCommand struct {
	line   int // within the block
	cmd    string
	answer string // "" when none is shown
}

// shellCommands splits a block into commands (joining lines ending in \)
// and their trailing comments, skipping comment lines.
func shellCommands(text string) []shellCommand {
	var out []shellCommand
	var cur *shellCommand
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur == nil {
			cur = &shellCommand{line: i + 1}
		}
		code, answer := splitComment(line)
		if strings.HasSuffix(strings.TrimSpace(code), "\\") {
			cur.cmd += strings.TrimSuffix(strings.TrimSpace(code), "\\") + " "
			continue
		}
		cur.cmd += code
		cur.answer = answer
		out = append(out, *cur)
		cur = nil
	}
	return out
}

// splitComment splits a shell line at a # that starts a comment: after
// white space and outside quotes.
func splitComment(line string) (code, comment string) {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && i > 0 && (line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
	}
	return strings.TrimSpace(line), ""
}

var (
	goRun   = regexp.MustCompile(`\bgo run \./cmd/idforge\b`)
	goBuild = regexp.MustCompile(`^go build (?:.* )?-o (\S+) (?:.* )?\./cmd/idforge$`)
	httpArg = regexp.MustCompile(`--http[ =](\S+)`)
)

func (d *docRun) command(b docBlock, c shellCommand) {
	t := d.t
	where := fmt.Sprintf("%s:%d", b.file, b.line+c.line)
	cmd := d.local(c.cmd)
	for i := 0; i < len(d.subst); i += 2 {
		cmd = strings.ReplaceAll(cmd, d.subst[i], d.subst[i+1])
	}
	cmd = goRun.ReplaceAllString(cmd, d.bin)
	if m := goBuild.FindStringSubmatch(cmd); m != nil {
		cmd = "cp " + d.bin + " " + m[1]
	}
	if p := d.ports["8080"]; p != "" && d.node == nil && !b.is("sh", "run", "offline") && strings.Contains(cmd, ":"+p) {
		d.startNode(where)
	}
	background := strings.HasSuffix(cmd, "&")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", cmd)
	if background {
		sh = exec.Command("sh", "-c", cmd)
	}
	sh.Dir, sh.Env = d.dir, d.env
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errOut bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &errOut
	if background {
		if err := sh.Start(); err != nil {
			t.Fatalf("%s: %s: %v", where, c.cmd, err)
		}
		pgid := sh.Process.Pid
		t.Cleanup(func() {
			syscall.Kill(-pgid, syscall.SIGTERM)
			sh.Wait()
		})
		if m := httpArg.FindStringSubmatch(cmd); m != nil {
			waitListening(t, where, m[1], &errOut)
		}
		return
	}
	err := sh.Run()
	got := strings.Join(strings.Fields(out.String()), " ")
	wantAnswer := d.local(c.answer)
	for i := 0; i < len(d.subst); i += 2 {
		wantAnswer = strings.ReplaceAll(wantAnswer, d.subst[i], d.subst[i+1])
	}
	if err != nil && !strings.Contains(c.answer, `"error"`) {
		t.Fatalf("%s: %s\n%v\n%s%s", where, c.cmd, err, out.String(), errOut.String())
	}
	if c.answer != "" && !answerPattern(wantAnswer).MatchString(got) {
		t.Fatalf("%s: %s\nanswered: %s\nthe document shows: %s\n%s", where, c.cmd, got, c.answer, errOut.String())
	}
}

// startNode starts the document's node: idforge serve on the embedded
// default in the document's directory, where the document says
// localhost:8080.
func (d *docRun) startNode(where string) {
	d.t.Logf("%s: starting the document's node on 127.0.0.1:%s", where, d.ports["8080"])
	d.node = e2e.NewNode(d.t, "--data", filepath.Join(d.dir, "idforge-data"), "--http", "127.0.0.1:"+d.ports["8080"])
	d.node.Dir = d.dir
	if err := d.node.Start(); err != nil {
		d.t.Fatal(err)
	}
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, where, addr string, out *bytes.Buffer) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: nothing listens on %s after 90 s:\n%s", where, addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answerPattern turns the answer a document shows into a pattern of the
// real one: its white space collapsed, <id> any number, <time> any time
// (digits, T, Z, :, ., +, -), … anything.
func answerPattern(answer string) *regexp.Regexp {
	answer = strings.Join(strings.Fields(answer), " ")
	var re strings.Builder
	re.WriteString("^")
	for len(answer) > 0 {
		switch {
		case strings.HasPrefix(answer, "<id>"):
			re.WriteString(`\d+`)
			answer = answer[len("<id>"):]
		case strings.HasPrefix(answer, "<time>"):
			re.WriteString(`[0-9TZ:.+\-]+`)
			answer = answer[len("<time>"):]
		case strings.HasPrefix(answer, "…"):
			re.WriteString(`.*`)
			answer = answer[len("…"):]
		default:
			_, size := utf8.DecodeRuneInString(answer)
			re.WriteString(regexp.QuoteMeta(answer[:size]))
			answer = answer[size:]
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}
