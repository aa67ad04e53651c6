package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Tokens used across the tests; each is at least MinTokenLen long.
const (
	adminTok   = "admin-0123456789abcdef"
	issueTok   = "issue-0123456789abcdef"
	orderTok   = "order-0123456789abcdef"
	limitedTok = "limit-0123456789abcdef"
	unknownTok = "wrong-0123456789abcdef"
)

// testConfig has a global admin token, a global issue token, an issue
// token for the key "order" only, and a rate-limited one (1/s, burst 2).
func testConfig() Config {
	return Config{Tokens: []Token{
		{Name: "admin", Token: adminTok, Role: RoleAdmin},
		{Name: "issue", Token: issueTok, Role: RoleIssue},
		{Name: "order", Token: orderTok, Keys: []string{"order"}},
		{Name: "limited", Token: limitedTok, Rate: 1, Burst: 2},
	}}
}

// fakeClock is a settable time source for the rate limiters.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestAuth(tb testing.TB) (*Authenticator, *fakeClock) {
	tb.Helper()
	a, err := New(testConfig())
	if err != nil {
		tb.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	a.now = clk.now
	return a, clk
}

func setEnv(tb testing.TB, env map[string]string) {
	tb.Helper()
	old := lookupEnv
	lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tb.Cleanup(func() { lookupEnv = old })
}

func TestNew(t *testing.T) {
	setEnv(t, map[string]string{"GOOD": "from-env-0123456789", "EMPTY": ""})
	tok := func(mod func(*Token)) Config {
		tk := Token{Token: adminTok, Role: RoleAdmin}
		mod(&tk)
		return Config{Tokens: []Token{tk}}
	}
	tests := []struct {
		name string
		cfg  Config
		err  error  // nil: success
		msg  string // part of the message
	}{
		{"ok", testConfig(), nil, ""},
		{"no tokens", Config{}, ErrNoTokens, ""},
		{"empty token", tok(func(t *Token) { t.Token = "" }), ErrInvalidConfig, "empty token"},
		{"short token", tok(func(t *Token) { t.Token = "short" }), ErrInvalidConfig, "at least 16"},
		{"white space", tok(func(t *Token) { t.Token = "abc def 0123456789" }), ErrInvalidConfig, "white space"},
		{"unknown role", tok(func(t *Token) { t.Role = "root" }), ErrInvalidConfig, `unknown role "root"`},
		{"empty role is issue", tok(func(t *Token) { t.Role = "" }), nil, ""},
		{"bad key", tok(func(t *Token) { t.Keys = []string{"a/b"} }), ErrInvalidConfig, "keys"},
		{"negative rate", tok(func(t *Token) { t.Rate = -1 }), ErrInvalidConfig, "rate"},
		{"negative burst", tok(func(t *Token) { t.Rate, t.Burst = 1, -1 }), ErrInvalidConfig, "burst"},
		{"burst without rate", tok(func(t *Token) { t.Burst = 3 }), ErrInvalidConfig, "without a rate"},
		{"env token", tok(func(t *Token) { t.Token = "env:GOOD" }), nil, ""},
		{"env unset", tok(func(t *Token) { t.Token = "env:MISSING" }), ErrInvalidConfig, "MISSING is not set"},
		{"env empty", tok(func(t *Token) { t.Token = "env:EMPTY" }), ErrInvalidConfig, "EMPTY is not set"},
		{"env no name", tok(func(t *Token) { t.Token = "env:" }), ErrInvalidConfig, "names no environment variable"},
		{"duplicate", Config{Tokens: []Token{{Name: "a", Token: adminTok}, {Name: "b", Token: adminTok}}}, ErrInvalidConfig, `"b") has the same token as tokens[0] ("a")`},
		{"duplicate name", Config{Tokens: []Token{{Name: "a", Token: adminTok}, {Name: "a", Token: issueTok}}}, ErrInvalidConfig, `tokens[1] ("a") has the same name as tokens[0] ("a"): give each token its own name`},
		{"name of a position", Config{Tokens: []Token{{Token: adminTok}, {Name: "tokens[0]", Token: issueTok}}}, ErrInvalidConfig, "has the same name as tokens[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.cfg)
			if tc.err == nil {
				if err != nil || a == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("New: err %v, want %v", err, tc.err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("New: %q does not say %q", err, tc.msg)
			}
			for _, tk := range tc.cfg.Tokens {
				if len(tk.Token) >= 8 && strings.Contains(err.Error(), tk.Token) {
					t.Errorf("error %q reveals the token", err)
				}
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	setEnv(t, map[string]string{EnvToken: "env-admin-0123456789", EnvIssueToken: ""})
	base := Config{Tokens: []Token{{Token: issueTok}}}
	c := FromEnv(base)
	if len(base.Tokens) != 1 {
		t.Fatal("FromEnv changed its argument")
	}
	if len(c.Tokens) != 2 || c.Tokens[1].Token != "env:"+EnvToken || c.Tokens[1].Role != RoleAdmin {
		t.Fatalf("FromEnv = %+v; want the admin token of %s added (and no issue token: it is empty)", c.Tokens, EnvToken)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if caller, err := a.Authorize("env-admin-0123456789", Access{Level: Admin}); err != nil || caller.Role != RoleAdmin {
		t.Fatalf("Authorize(env token) = %+v, %v", caller, err)
	}
	if (Config{}).Configured() || !c.Configured() {
		t.Error("Configured is wrong")
	}
}

// TestFromEnvDefinedTwice: a token the environment adds that the file
// defines too (by its secret or its name), or the same secret in both
// variables, is refused at start with where the second copy comes from.
func TestFromEnvDefinedTwice(t *testing.T) {
	const secret = "env-secret-0123456789"
	for _, tc := range []struct {
		name string
		env  map[string]string
		file []Token
		msg  string
	}{
		{"file reads the variable too", map[string]string{EnvToken: secret}, []Token{{Name: "ops", Token: "env:" + EnvToken, Role: RoleAdmin}},
			`tokens[1] ("IDFORGE_TOKEN") has the same token as tokens[0] ("ops") (IDFORGE_TOKEN is set in the environment`},
		{"file repeats the secret", map[string]string{EnvIssueToken: secret}, []Token{{Name: "ops", Token: secret}},
			`tokens[1] ("IDFORGE_ISSUE_TOKEN") has the same token as tokens[0] ("ops") (IDFORGE_ISSUE_TOKEN is set`},
		{"file uses the name", map[string]string{EnvToken: secret}, []Token{{Name: EnvToken, Token: issueTok}},
			`tokens[1] ("IDFORGE_TOKEN") has the same name as tokens[0] ("IDFORGE_TOKEN")`},
		{"both variables alike", map[string]string{EnvToken: secret, EnvIssueToken: secret}, nil,
			`tokens[1] ("IDFORGE_ISSUE_TOKEN") has the same token as tokens[0] ("IDFORGE_TOKEN")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			_, err := New(FromEnv(Config{Tokens: tc.file}))
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("New(FromEnv) = %v; want ErrInvalidConfig saying %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q reveals the token", err)
			}
		})
	}
}

// TestAuthorize covers every outcome for every kind of token.
func TestAuthorize(t *testing.T) {
	a, _ := newTestAuth(t)
	tests := []struct {
		token string
		acc   Access
		err   error
	}{
		{"", Access{Level: Open}, nil},
		{"", Access{Level: Read}, ErrUnauthenticated},
		{unknownTok, Access{Level: Read}, ErrUnauthenticated},
		{adminTok[:len(adminTok)-1], Access{Level: Read}, ErrUnauthenticated}, // a prefix is not the token
		{adminTok + "x", Access{Level: Read}, ErrUnauthenticated},
		{adminTok, Access{Level: Read}, nil},
		{adminTok, Access{Level: Issue, Key: "order"}, nil},
		{adminTok, Access{Level: Issue}, nil},
		{adminTok, Access{Level: Admin}, nil},
		{issueTok, Access{Level: Read}, nil},
		{issueTok, Access{Level: Issue, Key: "msg"}, nil},
		{issueTok, Access{Level: Issue}, nil},
		{issueTok, Access{Level: Admin}, ErrForbidden},
		{issueTok, Access{}, ErrForbidden}, // the zero Access is admin
		{orderTok, Access{Level: Read}, nil},
		{orderTok, Access{Level: Issue, Key: "order"}, nil},
		{orderTok, Access{Level: Issue, Key: "msg"}, ErrForbidden},
		{orderTok, Access{Level: Issue}, ErrForbidden},
		{orderTok, Access{Level: Admin, Key: "order"}, ErrForbidden},
	}
	for _, tc := range tests {
		caller, err := a.Authorize(tc.token, tc.acc)
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Authorize(%q, %v %q) = %v, want %v", tc.token, tc.acc.Level, tc.acc.Key, err, tc.err)
			continue
		}
		if err == nil && tc.acc.Level != Open && caller.Name == "" {
			t.Errorf("Authorize(%q, %v) returned no caller", tc.token, tc.acc.Level)
		}
		if err != nil && tc.token != "" && strings.Contains(err.Error(), tc.token) {
			t.Errorf("error %q reveals the token", err)
		}
	}
}

func TestRateLimit(t *testing.T) {
	a, clk := newTestAuth(t)
	acc := Access{Level: Issue, Key: "order"}
	for i := range 2 { // the burst
		if _, err := a.Authorize(limitedTok, acc); err != nil {
			t.Fatalf("request %d within the burst: %v", i, err)
		}
	}
	_, err := a.Authorize(limitedTok, acc)
	var rl *RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("third request: %v, want a *RateLimitError", err)
	}
	if rl.RetryAfter <= 0 || rl.RetryAfter > time.Second || rl.Token != "limited" {
		t.Errorf("RateLimitError = %+v; want a retry within 1s for token limited", rl)
	}
	// A refused request does not use up the rate: after RetryAfter, one
	// request passes.
	clk.advance(rl.RetryAfter)
	if _, err := a.Authorize(limitedTok, acc); err != nil {
		t.Fatalf("after RetryAfter: %v", err)
	}
	if _, err := a.Authorize(limitedTok, acc); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("right after: %v, want rate limited", err)
	}
	// Other tokens are not limited by it.
	if _, err := a.Authorize(issueTok, acc); err != nil {
		t.Fatal(err)
	}
	// A forbidden request does not count against the rate.
	clk.advance(10 * time.Second)
	for range 5 {
		if _, err := a.Authorize(limitedTok, Access{Level: Admin}); !errors.Is(err, ErrForbidden) {
			t.Fatalf("admin call with an issue token: %v", err)
		}
	}
	if _, err := a.Authorize(limitedTok, acc); err != nil {
		t.Fatalf("after forbidden requests: %v", err)
	}
}

// TestIdentifyVisitsEveryToken checks that every configured token is
// found, wherever it is in the list (the comparison loop has no early
// exit; see identify).
func TestIdentifyVisitsEveryToken(t *testing.T) {
	a, _ := newTestAuth(t)
	for i, tok := range []string{adminTok, issueTok, orderTok, limitedTok} {
		if e := a.identify(tok); e != a.entries[i] {
			t.Errorf("identify(token %d) = %v", i, e)
		}
	}
	if a.identify(unknownTok) != nil || a.identify("") != nil {
		t.Error("identify found an unknown token")
	}
}

func BenchmarkAuthorize(b *testing.B) {
	a, _ := newTestAuth(b)
	acc := Access{Level: Issue, Key: "order"}
	for b.Loop() {
		if _, err := a.Authorize(orderTok, acc); err != nil {
			b.Fatal(err)
		}
	}
}
