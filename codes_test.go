package idforge_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// TestVocabulary walks every code: each has an HTTP status (500 for
// internal only), a gRPC code, and, but for internal, a sentinel that
// ErrorCode maps back to the code. Transports and the client check their
// own side (server/httpapi, server/grpcapi, client: TestVocabulary*).
func TestVocabulary(t *testing.T) {
	seen := map[idforge.Code]bool{}
	for _, c := range idforge.Codes() {
		if seen[c] {
			t.Errorf("%s is in the vocabulary twice", c)
		}
		seen[c] = true
		status := c.HTTPStatus()
		if status < 400 || status > 599 {
			t.Errorf("%s: HTTP status %d is not an error status", c, status)
		}
		if (status == 500) != (c == idforge.CodeInternal) {
			t.Errorf("%s: HTTP status %d; 500 is for internal (a bug) only", c, status)
		}
		if g := c.GRPCCode(); g == 0 || strings.HasPrefix(g.String(), "CODE(") {
			t.Errorf("%s: gRPC code %v has no name", c, g)
		}
		if c == idforge.CodeInternal {
			if c.Err() != nil {
				t.Errorf("internal stands for %v; it must match nothing", c.Err())
			}
			continue
		}
		sentinel := c.Err()
		if sentinel == nil {
			t.Errorf("%s has no sentinel", c)
			continue
		}
		if got := idforge.ErrorCode(fmt.Errorf("context: %w", sentinel)); got != c {
			t.Errorf("%s → %v → %s", c, sentinel, got)
		}
		if got := idforge.IsRetryable(fmt.Errorf("context: %w", sentinel)); got != c.Retryable() {
			t.Errorf("%s: IsRetryable %v, Retryable %v", c, got, c.Retryable())
		}
	}
	if last := idforge.Codes()[len(idforge.Codes())-1]; last != idforge.CodeInternal {
		t.Errorf("the last code is %s, want internal", last)
	}
	if code := idforge.ErrorCode(errors.New("boom")); code != idforge.CodeInternal {
		t.Errorf("plain error: %q", code)
	}
	unknown := idforge.Code("no_such_code")
	if unknown.Err() != nil || unknown.HTTPStatus() != 500 || unknown.Retryable() {
		t.Errorf("a code outside the vocabulary: %v %d %v, want nil 500 false", unknown.Err(), unknown.HTTPStatus(), unknown.Retryable())
	}
}

// A backend's error without a code is unavailable (it says nothing about
// the request); one with a code keeps it.
func TestBackendError(t *testing.T) {
	if idforge.BackendError(nil) != nil {
		t.Fatal("BackendError(nil) is not nil")
	}
	lost := errors.New("connection refused")
	if err := idforge.BackendError(lost); idforge.ErrorCode(err) != idforge.CodeUnavailable || !errors.Is(err, lost) {
		t.Errorf("a driver's error: %v (%s), want unavailable wrapping it", err, idforge.ErrorCode(err))
	}
	for _, sentinel := range []error{idforge.ErrUnknownKey, idforge.ErrSpaceExhausted, idforge.ErrClosed, idforge.ErrKeyExists} {
		err := fmt.Errorf("store: %w", sentinel)
		if got := idforge.BackendError(err); got != err {
			t.Errorf("%v became %v", err, got)
		}
	}
	// A template whose key could not be read: a code about the request
	// and one about the node; the node's state is worth a retry.
	both := fmt.Errorf("%w: seq: %w", idforge.ErrInvalidArgument, idforge.ErrUnavailable)
	if !idforge.IsRetryable(both) || idforge.IsRetryable(idforge.ErrInvalidArgument) {
		t.Error("IsRetryable does not find a retryable code behind another")
	}
}

// TestEverySentinelHasACode fails when errors.go declares a sentinel that
// the vocabulary in codes.go does not list.
func TestEverySentinelHasACode(t *testing.T) {
	declared := errIdents(t, "errors.go", func(n ast.Node) ast.Node { return n })
	listed := errIdents(t, "codes.go", func(n ast.Node) ast.Node {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "vocabulary" {
			return vs
		}
		return nil
	})
	for _, name := range declared {
		if !slices.Contains(listed, name) {
			t.Errorf("%s (errors.go) has no row in the vocabulary (codes.go)", name)
		}
	}
	if len(declared) < 20 {
		t.Fatalf("found only %d sentinels in errors.go: %v", len(declared), declared)
	}
}

// errIdents returns the names starting with "Err" inside the parts of
// file that pick selects (declarations in errors.go, the vocabulary's
// rows in codes.go).
func errIdents(t *testing.T, file string, pick func(ast.Node) ast.Node) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		part := pick(n)
		if part == nil {
			return true
		}
		ast.Inspect(part, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, "Err") && !slices.Contains(names, id.Name) {
				names = append(names, id.Name)
			}
			return true
		})
		return false
	})
	return names
}

// errorRow is a row of a README's error table:
// | `code` | HTTP status | `gRPC code` | retryable | meaning |
var errorRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| (\\d{3}) \\| `([A-Z_]+)` \\| ([^|]+) \\| [^|]+ \\|$")

// TestREADMEErrorTables checks that both READMEs list every code, once,
// with the vocabulary's HTTP status, gRPC code and retryability, and no
// code that is not in it.
func TestREADMEErrorTables(t *testing.T) {
	for file, yes := range map[string][2]string{"docs/http-api.md": {"yes", "no"}, "docs/zh-CN/http-api.md": {"是", "否"}} {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rows := map[idforge.Code]bool{}
			for _, line := range strings.Split(string(raw), "\n") {
				m := errorRow.FindStringSubmatch(strings.TrimSpace(line))
				if m == nil {
					continue
				}
				c := idforge.Code(m[1])
				if rows[c] {
					t.Errorf("%s has two rows", c)
				}
				rows[c] = true
				if !slices.Contains(idforge.Codes(), c) {
					t.Errorf("%s is not in the vocabulary", c)
					continue
				}
				if status, _ := strconv.Atoi(m[2]); status != c.HTTPStatus() {
					t.Errorf("%s: HTTP %d, the vocabulary says %d", c, status, c.HTTPStatus())
				}
				if m[3] != c.GRPCCode().String() {
					t.Errorf("%s: gRPC %s, the vocabulary says %s", c, m[3], c.GRPCCode())
				}
				want := yes[1]
				if c.Retryable() {
					want = yes[0]
				}
				if got := strings.TrimSpace(m[4]); got != want {
					t.Errorf("%s: retryable %q, want %q", c, got, want)
				}
			}
			for _, c := range idforge.Codes() {
				if !rows[c] {
					t.Errorf("%s has no row in the error table", c)
				}
			}
		})
	}
}
