package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/idforge/idforge"
)

// Errors of Authorize: idforge's own sentinels, so that every transport
// answers them from the one error vocabulary (see idforge.Code) and a Go
// client gets them back with errors.Is.
var (
	// ErrUnauthenticated is returned when no token was presented or the
	// presented one is not configured.
	ErrUnauthenticated = idforge.ErrUnauthenticated
	// ErrForbidden is returned when the token is valid but its role or
	// its keys do not allow the request.
	ErrForbidden = idforge.ErrForbidden
	// ErrRateLimited is returned, inside a *RateLimitError, when the
	// token has used up its rate.
	ErrRateLimited = idforge.ErrRateLimited
)

// RateLimitError is returned when a token is over its rate. It matches
// ErrRateLimited under errors.Is.
type RateLimitError struct {
	// Token names the token (its Name or position, never the secret).
	Token string
	// RetryAfter is how long until the token may make a request again.
	RetryAfter time.Duration
}

// Error says which token is over its rate and when to retry.
func (e *RateLimitError) Error() string {
	return fmt.Sprintf("auth: rate limited: token %s is over its rate; retry in %v", e.Token, e.RetryAfter.Round(time.Millisecond))
}

// Is reports whether target is ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Level is what a request needs.
type Level int

// The levels of Access, from the strictest. The zero Level is Admin, so a
// classifier that forgets a case fails closed.
const (
	// Admin needs an admin token (allowed Access.Key, when the token lists
	// keys).
	Admin Level = iota
	// Issue needs a token allowed to issue for Access.Key. An empty Key
	// (an endpoint that issues from the node-wide snowflake generator)
	// needs a token that lists no keys.
	Issue
	// Read needs any valid token.
	Read
	// Open needs no token.
	Open
)

// String returns "admin", "issue", "read" or "open".
func (l Level) String() string {
	switch l {
	case Admin:
		return "admin"
	case Issue:
		return "issue"
	case Read:
		return "read"
	case Open:
		return "open"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Access is what a request needs: a Level and, for Issue and Admin, the
// key it concerns.
type Access struct {
	// Level is what the request needs.
	Level Level
	// Key is the key the request issues for or administers; "" when it
	// names none.
	Key string
}

// Caller describes the token a request was authorized with.
type Caller struct {
	// Name is the token's Name, or "tokens[i]".
	Name string
	// Role is the token's role.
	Role Role
}

type callerKey struct{}

// CallerFrom returns the caller an authorized request's context carries;
// false for open requests and requests that did not pass through the
// middleware or an interceptor.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// entry is a configured token, digested.
type entry struct {
	digest  [sha256.Size]byte
	caller  Caller
	keys    map[string]struct{} // nil: every key
	limiter *rate.Limiter       // nil: no limit
}

// Authenticator checks tokens. It is safe for concurrent use.
type Authenticator struct {
	entries []*entry
	now     func() time.Time
}

// New returns an Authenticator accepting c's tokens. It returns an error
// wrapping ErrNoTokens when c has none, and one wrapping ErrInvalidConfig
// when a token is empty, shorter than MinTokenLen, names an unset
// environment variable, is given twice, has an unknown role, a malformed
// key, a negative or non-finite rate, a negative burst, or a burst
// without a rate. Errors name tokens by Name or position, never by value.
func New(c Config) (*Authenticator, error) {
	if len(c.Tokens) == 0 {
		return nil, ErrNoTokens
	}
	a := &Authenticator{now: time.Now}
	seen := make(map[[sha256.Size]byte]int, len(c.Tokens))
	names := make(map[string]int, len(c.Tokens))
	for i, t := range c.Tokens {
		role, burst, err := t.check(i)
		if err != nil {
			return nil, err
		}
		// A quota or a log names a token: two of one name would be one
		// caller to them, whichever secret was presented.
		if j, dup := names[t.callerName(i)]; dup {
			return nil, configErr("%s has the same name as %s%s: give each token its own name", t.name(i), c.Tokens[j].name(j), t.fromEnv())
		}
		names[t.callerName(i)] = i
		secret, err := t.secret(i)
		if err != nil {
			return nil, err
		}
		e := &entry{digest: sha256.Sum256([]byte(secret)), caller: Caller{Name: t.callerName(i), Role: role}}
		if j, dup := seen[e.digest]; dup {
			return nil, configErr("%s has the same token as %s%s: define each token once", t.name(i), c.Tokens[j].name(j), t.fromEnv())
		}
		seen[e.digest] = i
		if len(t.Keys) > 0 {
			e.keys = make(map[string]struct{}, len(t.Keys))
			for _, k := range t.Keys {
				e.keys[k] = struct{}{}
			}
		}
		if t.Rate > 0 {
			e.limiter = rate.NewLimiter(rate.Limit(t.Rate), burst)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// identify returns the entry whose token is presented, or nil. It compares
// the digest of presented with every entry's in constant time and visits
// all of them whatever matches, so the time taken says nothing about which
// token matched or how long the configured tokens are.
func (a *Authenticator) identify(presented string) *entry {
	if presented == "" {
		return nil
	}
	d := sha256.Sum256([]byte(presented))
	match := -1
	for i, e := range a.entries {
		eq := subtle.ConstantTimeCompare(d[:], e.digest[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return nil
	}
	return a.entries[match]
}

// errNoToken is the error for a request that presents no token. Where a
// token goes depends on the transport, so the transport adds how to send
// one (withTokenHint).
var errNoToken = fmt.Errorf("%w: no token", ErrUnauthenticated)

// withTokenHint adds hint, how to send a token over the transport that
// answers, to an error for a request without one; other errors it
// returns as they are.
func withTokenHint(err error, hint string) error {
	if errors.Is(err, errNoToken) {
		return fmt.Errorf("%w; send %s", err, hint)
	}
	return err
}

// authenticate returns the entry of presented or an error wrapping
// ErrUnauthenticated.
func (a *Authenticator) authenticate(presented string) (*entry, error) {
	if presented == "" {
		return nil, errNoToken
	}
	e := a.identify(presented)
	if e == nil {
		return nil, fmt.Errorf("%w: the token is not valid", ErrUnauthenticated)
	}
	return e, nil
}

// permitLevel checks the role against the level, ignoring keys.
func (e *entry) permitLevel(l Level) error {
	if l == Admin && e.caller.Role != RoleAdmin {
		return fmt.Errorf("%w: token %s has role %s; this needs an admin token", ErrForbidden, e.caller.Name, e.caller.Role)
	}
	return nil
}

// permitKey checks the token's keys against acc.
func (e *entry) permitKey(acc Access) error {
	if e.keys == nil || acc.Level == Read || acc.Level == Open {
		return nil
	}
	if acc.Key == "" {
		return fmt.Errorf("%w: token %s is limited to some keys and cannot use an endpoint that names no key", ErrForbidden, e.caller.Name)
	}
	if _, ok := e.keys[acc.Key]; !ok {
		return fmt.Errorf("%w: token %s is not allowed key %q", ErrForbidden, e.caller.Name, acc.Key)
	}
	return nil
}

// allow takes one request from the token's rate.
func (a *Authenticator) allow(e *entry) error {
	if e.limiter == nil {
		return nil
	}
	now := a.now()
	r := e.limiter.ReserveN(now, 1)
	if !r.OK() {
		return &RateLimitError{Token: e.caller.Name, RetryAfter: time.Second}
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &RateLimitError{Token: e.caller.Name, RetryAfter: d}
	}
	return nil
}

// Authorize checks a presented token (empty when none was sent) against
// acc and, when allowed, counts the request against the token's rate. It
// returns the caller, or an error wrapping ErrUnauthenticated,
// ErrForbidden or ErrRateLimited (a *RateLimitError). Open access is
// always allowed and returns the zero Caller.
func (a *Authenticator) Authorize(token string, acc Access) (Caller, error) {
	if acc.Level == Open {
		return Caller{}, nil
	}
	e, err := a.authenticate(token)
	if err != nil {
		return Caller{}, err
	}
	if err := e.permitLevel(acc.Level); err != nil {
		return Caller{}, err
	}
	if err := e.permitKey(acc); err != nil {
		return Caller{}, err
	}
	if err := a.allow(e); err != nil {
		return Caller{}, err
	}
	return e.caller, nil
}

// retryAfterSeconds rounds d up to whole seconds, at least 1, for a
// Retry-After header.
func retryAfterSeconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}
