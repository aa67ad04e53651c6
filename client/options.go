package client

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/idforge/idforge"
)

// Defaults of the remote clients.
const (
	// DefaultTimeout bounds a call whose context has no deadline: every
	// attempt and retry together.
	DefaultTimeout = 5 * time.Second
	// DefaultRetries is how many times a call is retried, on the next
	// node, after a failure another node may not have.
	DefaultRetries = 2
	// DefaultRefillAt is the share of a cached block left when the next
	// block is fetched.
	DefaultRefillAt = 0.2
)

// maxAddrs bounds the number of server addresses of one client.
const maxAddrs = 64

// An Option configures NewHTTP or NewGRPC.
type Option func(*options)

type options struct {
	timeout     time.Duration
	token       string
	tls         *tls.Config
	retries     int
	httpClient  *http.Client
	dialOptions []grpc.DialOption
	cacheBatch  int // 0: no range cache
	refillAt    float64
	err         error // the first invalid option
}

func (o *options) fail(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: client: "+format, append([]any{idforge.ErrInvalidArgument}, args...)...)
	}
}

func buildOptions(addrs []string, opts []Option) (options, error) {
	o := options{timeout: DefaultTimeout, retries: DefaultRetries}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.err != nil:
	case len(addrs) == 0:
		o.fail("no server address")
	case len(addrs) > maxAddrs:
		o.fail("%d server addresses, at most %d allowed", len(addrs), maxAddrs)
	}
	return o, o.err
}

// WithTimeout bounds each call whose context has no deadline, all
// attempts included (default DefaultTimeout, 5 s). A deadline on the
// call's context wins. d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.fail("timeout %s is not positive", d)
		}
		o.timeout = d
	}
}

// WithToken sends token with every call: as "Authorization: Bearer
// token" over HTTP, as the metadata "authorization: Bearer token" over
// gRPC. Without WithTLS it travels in clear text.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithTLS talks TLS with the servers: https:// for addresses without a
// scheme (NewHTTP), TLS transport credentials (NewGRPC). NewHTTP ignores
// it when WithHTTPClient is given: configure that client's transport.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) { o.tls = cfg.Clone() }
}

// WithRetries sets how many times a failed call is retried (default
// DefaultRetries, 2): each retry goes to the next node that has not
// failed recently, and after every node was tried, after a short
// backoff. 0 turns retries and fail-over off. n must not be negative.
func WithRetries(n int) Option {
	return func(o *options) {
		if n < 0 {
			o.fail("retries %d is negative", n)
		}
		o.retries = n
	}
}

// WithHTTPClient makes NewHTTP send its requests with hc instead of a
// client of its own (which keeps up to 256 idle connections per node).
// Close does not close hc's connections. NewGRPC ignores it.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) {
		if hc == nil {
			o.fail("nil HTTP client")
		}
		o.httpClient = hc
	}
}

// WithDialOptions adds gRPC dial options (client interceptors, keepalive,
// a custom dialer…) after the client's own, so they win. NewHTTP ignores
// it.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOptions = append(o.dialOptions, opts...) }
}

// WithRangeCache caches IDs of segment keys in the client: it fetches
// batch IDs at a time (1 to idforge.MaxCount) and hands them out locally,
// fetching the next block in the background once refillAt of the block is
// left (0 < refillAt < 1; 0 means DefaultRefillAt, 0.2). Choose batch so
// that refillAt·batch IDs last longer than a round trip at the peak rate.
//
// Taking a cached ID costs one atomic add. A caller waits for the
// network only when the cache is empty: on a key's first use, or when IDs
// are taken faster than blocks arrive (the rate a cache sustains is about
// batch IDs per round trip). NextN
// for batch IDs or more bypasses the cache. IDs are handed out in the
// order they were fetched, each ID once. Cached IDs are lost when the
// client stops (gaps). The first use of a key asks the server for the
// key's strategy and order; keys other than segment keys, and segment
// keys in global order (idforge.OrderGlobal, whose IDs a cache would hand
// out after other clients got higher ones), are not cached: every call
// goes to the server.
func WithRangeCache(batch int, refillAt float64) Option {
	return func(o *options) {
		if batch < 1 || batch > idforge.MaxCount {
			o.fail("range cache batch %d out of range 1..%d", batch, idforge.MaxCount)
		}
		if refillAt == 0 {
			refillAt = DefaultRefillAt
		}
		if !(refillAt > 0 && refillAt < 1) {
			o.fail("range cache refillAt %v out of range (0, 1)", refillAt)
		}
		o.cacheBatch, o.refillAt = batch, refillAt
	}
}
