package auth

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/idforge/idforge"
)

// Role says what a token may do.
type Role string

// The roles a token can have.
const (
	// RoleIssue may take IDs (of the token's keys, when it lists any) and
	// use the read-only endpoints: list keys, explain IDs.
	RoleIssue Role = "issue"
	// RoleAdmin may do everything RoleIssue may, and administer: create
	// keys and any later administrative call.
	RoleAdmin Role = "admin"
)

// Environment variables FromEnv reads.
const (
	// EnvToken holds an admin token, for deployments that keep secrets
	// out of the config file.
	EnvToken = "IDFORGE_TOKEN"
	// EnvIssueToken holds an issue token.
	EnvIssueToken = "IDFORGE_ISSUE_TOKEN"
)

// envPrefix marks a Token value that names an environment variable.
const envPrefix = "env:"

// MinTokenLen is the shortest token New accepts, in bytes. 32 random hex
// digits (openssl rand -hex 16) are a good token.
const MinTokenLen = 16

// Config lists the tokens a server accepts. In idforge's TOML config file:
//
//	[auth]
//	tokens = [
//	  { name = "ops", token = "env:IDFORGE_TOKEN", role = "admin" },
//	  { name = "orders", token = "0f673adf80504e2eaa552f5d791b644c", role = "issue", keys = ["order"], rate = 500, burst = 1000 },
//	]
type Config struct {
	// Tokens are the accepted tokens: global ones (no Keys) and per-key
	// ones.
	Tokens []Token `toml:"tokens"`
}

// Token is one accepted token.
type Token struct {
	// Name identifies the token in logs and errors (never the token
	// itself). Default: "tokens[i]", its position.
	Name string `toml:"name"`
	// Token is the secret, at least MinTokenLen bytes, or "env:VAR" to
	// read it from the environment variable VAR (which must be set and
	// not empty).
	Token string `toml:"token"`
	// Role is RoleIssue or RoleAdmin; empty means RoleIssue.
	Role Role `toml:"role"`
	// Keys, when not empty, limits the token to these keys (and serials,
	// by their own names): it may issue (or administer) only them, and
	// not call the keyless issuing
	// endpoints (Leaf's and Vesta's node-wide snowflake IDs). Empty means
	// every key.
	Keys []string `toml:"keys"`
	// Rate limits the token to this many requests per second, on average;
	// 0 means no limit. Every request counts once, however many IDs it
	// asks for; a gRPC stream counts once when it starts.
	Rate float64 `toml:"rate"`
	// Burst is how many requests may come at once above Rate; 0 means
	// Rate rounded up (at least 1). It needs a Rate.
	Burst int `toml:"burst"`
}

// lookupEnv is os.LookupEnv; tests replace it.
var lookupEnv = os.LookupEnv

// FromEnv returns c with the tokens of the environment added: an admin
// token from IDFORGE_TOKEN and an issue token from IDFORGE_ISSUE_TOKEN,
// each when the variable is set and not empty. The added tokens refer to
// the variables ("env:IDFORGE_TOKEN"); New reads them, and refuses one the
// file defines too (the same secret or name), as any token defined twice.
func FromEnv(c Config) Config {
	out := Config{Tokens: append([]Token(nil), c.Tokens...)}
	for _, e := range []struct {
		name string
		role Role
	}{{EnvToken, RoleAdmin}, {EnvIssueToken, RoleIssue}} {
		if v, ok := lookupEnv(e.name); ok && v != "" {
			out.Tokens = append(out.Tokens, Token{Name: e.name, Token: envPrefix + e.name, Role: e.role})
		}
	}
	return out
}

// fromEnv explains, for a token FromEnv added, where it comes from.
func (t Token) fromEnv() string {
	if t.Token == envPrefix+t.Name && (t.Name == EnvToken || t.Name == EnvIssueToken) {
		return fmt.Sprintf(" (%s is set in the environment, which adds it as a token; unset it or drop the entry that repeats it)", t.Name)
	}
	return ""
}

// Names returns the names the tokens of c are known by (Caller.Name): a
// token's Name, or "tokens[i]" for one without, in order. A quota limited
// to tokens names them so.
func (c Config) Names() []string {
	out := make([]string, len(c.Tokens))
	for i, t := range c.Tokens {
		out[i] = t.callerName(i)
	}
	return out
}

// callerName is the name the i-th token is known by to callers' checks.
func (t Token) callerName(i int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("tokens[%d]", i)
}

// Configured reports whether c lists any token.
func (c Config) Configured() bool { return len(c.Tokens) > 0 }

// ErrNoTokens is returned by New for a Config without tokens: run the
// server without the middleware and interceptors instead, where
// CheckExposure allows it.
var ErrNoTokens = errors.New("auth: no tokens configured")

// ErrInvalidConfig is wrapped by every other error New returns.
var ErrInvalidConfig = errors.New("auth: invalid configuration")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// name returns how errors and logs refer to the i-th token.
func (t Token) name(i int) string {
	if t.Name != "" {
		return fmt.Sprintf("tokens[%d] (%q)", i, t.Name)
	}
	return fmt.Sprintf("tokens[%d]", i)
}

// secret resolves the token's value, reading "env:VAR" references.
func (t Token) secret(i int) (string, error) {
	v := t.Token
	if rest, ok := strings.CutPrefix(v, envPrefix); ok {
		if rest == "" {
			return "", configErr("%s: %q names no environment variable", t.name(i), v)
		}
		env, set := lookupEnv(rest)
		if !set || env == "" {
			return "", configErr("%s: environment variable %s is not set or empty", t.name(i), rest)
		}
		v = env
	}
	switch {
	case v == "":
		return "", configErr("%s: empty token", t.name(i))
	case len(v) < MinTokenLen:
		return "", configErr("%s: token is %d bytes, at least %d required (e.g. openssl rand -hex 16)", t.name(i), len(v), MinTokenLen)
	case strings.TrimSpace(v) != v || strings.ContainsAny(v, " \t\r\n"):
		return "", configErr("%s: token contains white space", t.name(i))
	}
	return v, nil
}

// check validates everything but the secret and returns the resolved
// role and burst.
func (t Token) check(i int) (Role, int, error) {
	role := t.Role
	if role == "" {
		role = RoleIssue
	}
	if role != RoleIssue && role != RoleAdmin {
		return "", 0, configErr("%s: unknown role %q (want %q or %q)", t.name(i), t.Role, RoleIssue, RoleAdmin)
	}
	for _, k := range t.Keys {
		if err := idforge.ValidateKeyName(k); err != nil {
			return "", 0, configErr("%s: keys: %v", t.name(i), err)
		}
	}
	if t.Rate < 0 || math.IsNaN(t.Rate) || math.IsInf(t.Rate, 0) {
		return "", 0, configErr("%s: rate %v must be a finite number ≥ 0", t.name(i), t.Rate)
	}
	if t.Burst < 0 {
		return "", 0, configErr("%s: burst %d must be ≥ 0", t.name(i), t.Burst)
	}
	if t.Burst > 0 && t.Rate == 0 {
		return "", 0, configErr("%s: burst %d given without a rate", t.name(i), t.Burst)
	}
	burst := t.Burst
	if t.Rate > 0 && burst == 0 {
		burst = int(min(math.Ceil(t.Rate), math.MaxInt32))
	}
	return role, burst, nil
}
