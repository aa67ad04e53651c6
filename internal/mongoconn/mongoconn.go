// Package mongoconn is idforge's one owner of MongoDB connections, for
// the MongoDB store and sequence source: the driver's client options of a
// mongodb:// or mongodb+srv:// URL with their failover-safety rule
// (writes wait for a majority, w=majority, and reads see only what a
// majority has, readConcernLevel=majority, unless the URL weakens them
// and says so with allow_weak_writes=true or allow_weak_reads=true),
// connecting (Connect, which refuses FerretDB unless allowed), the
// default timeout, which errors a retry may cure (Transient), and which
// BSON numbers count as integers (Integer).
package mongoconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// Schemes are the URL schemes of a MongoDB connection string.
var Schemes = []string{"mongodb", "mongodb+srv"}

// DefaultDatabase is the database used when the URL's path names none.
const DefaultDatabase = "idforge"

// DefaultTimeout bounds connecting and each call without an earlier
// deadline.
const DefaultTimeout = 3 * time.Second

// Weak says which failover-safety defaults a URL may weaken.
type Weak struct {
	// Writes allows a write concern other than w=majority, or
	// journal=false.
	Writes bool
	// Reads allows a read concern other than majority or linearizable.
	Reads bool
}

// TakeWeak takes allow_weak_writes and allow_weak_reads from q.
func TakeWeak(q *dsn.Query) Weak {
	return Weak{Writes: q.Bool("allow_weak_writes", false), Reads: q.Bool("allow_weak_reads", false)}
}

// Check reports whether a URL of scheme, opaque part and fragment is a
// MongoDB connection string idforge takes; the error says what is wrong.
func Check(u *url.URL) error {
	switch {
	case u.Scheme != Schemes[0] && u.Scheme != Schemes[1]:
		return fmt.Errorf("scheme is not %s", strings.Join(Schemes, " or "))
	case u.Opaque != "":
		return fmt.Errorf("write %s://[user:password@]host[:port][,host…]/database[?param=value…]", u.Scheme)
	case u.Fragment != "":
		return fmt.Errorf("has a fragment")
	case u.Host == "":
		return fmt.Errorf("names no host")
	}
	_, err := Database(u)
	return err
}

// Database returns the database u's path names, DefaultDatabase when it
// names none. A name MongoDB would refuse is an error.
func Database(u *url.URL) (string, error) {
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return DefaultDatabase, nil
	}
	if len(name) > 63 || strings.ContainsAny(name, "/\\. \"$\x00") {
		return "", fmt.Errorf("database name %q: MongoDB takes at most 63 bytes without / \\ . space \" $", name)
	}
	return name, nil
}

// Config returns the driver's options for u, with query in place of its
// parameters (idforge's own taken out): everything the connection string
// says (hosts, replicaSet, authSource, tls, …; mongodb+srv:// looks its
// hosts up in DNS here), then the failover-safety defaults, where the
// string sets nothing else, and timeout as the bound on server selection
// and on connecting, where it sets neither. A string that weakens the
// write or read concern without weak allowing it is an error naming the
// parameter. No password of u shows in an error.
func Config(u *url.URL, query url.Values, weak Weak, timeout time.Duration) (*options.ClientOptions, error) {
	rest := *u
	rest.RawQuery = query.Encode()
	if rest.Path == "" {
		rest.Path = "/" // the driver wants a slash before the query
	}
	pw, _ := u.User.Password()
	opts := options.Client().ApplyURI(rest.String())
	if err := opts.Validate(); err != nil {
		return nil, dsn.Scrub(err, pw)
	}
	if err := safeConcerns(opts, weak); err != nil {
		return nil, err
	}
	if opts.ServerSelectionTimeout == nil {
		opts.SetServerSelectionTimeout(timeout)
	}
	if opts.ConnectTimeout == nil {
		opts.SetConnectTimeout(timeout)
	}
	return opts, nil
}

// safeConcerns sets w=majority and the majority read concern where opts
// has no concern of its own, and refuses a weaker one unless weak allows
// it.
func safeConcerns(opts *options.ClientOptions, weak Weak) error {
	switch wc := opts.WriteConcern; {
	case wc == nil:
		opts.SetWriteConcern(writeconcern.Majority())
	case wc.W == nil && (wc.Journal == nil || *wc.Journal):
		c := *wc
		c.W = "majority"
		opts.SetWriteConcern(&c)
	case !weak.Writes && (wc.W != "majority" || (wc.Journal != nil && !*wc.Journal)):
		return fmt.Errorf("write concern w=%v, journal=%v is weaker than w=majority: a fail-over may lose acknowledged claims and repeat IDs; "+
			"add allow_weak_writes=true to run with it anyway", wcW(wc), wcJ(wc))
	}
	switch rc := opts.ReadConcern; {
	case rc == nil || rc.Level == "":
		opts.SetReadConcern(readconcern.Majority())
	case rc.Level == "majority" || rc.Level == "linearizable":
	case !weak.Reads:
		return fmt.Errorf("readConcernLevel=%s is weaker than majority: a read may see a claim a fail-over then loses; "+
			"add allow_weak_reads=true to run with it anyway", rc.Level)
	}
	return nil
}

func wcW(wc *writeconcern.WriteConcern) any {
	if wc.W == nil {
		return "(default)"
	}
	return wc.W
}

func wcJ(wc *writeconcern.WriteConcern) any {
	if wc.Journal == nil {
		return "(default)"
	}
	return *wc.Journal
}

// Connect connects a client with opts and returns it once the primary
// answers within ctx. It returns an error wrapping
// idforge.ErrInvalidArgument for options the driver refuses, and for a
// FerretDB server (its buildInfo has ferretdbVersion) unless
// allowFerretDB: FerretDB 1.x applies findAndModify and update as a read
// and then a write of the document, not atomically, so concurrent
// increments could both read one value and issue it twice; the error says
// to add allow_ferretdb=true, which is right only for a FerretDB that runs
// one command at a time (tools/ferretdb's test server). Other errors are
// the driver's. Nothing is left connected when it fails.
func Connect(ctx context.Context, opts *options.ClientOptions, allowFerretDB bool) (*mongo.Client, error) {
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, invalid{err}
	}
	if err = c.Ping(ctx, readpref.Primary()); err == nil && !allowFerretDB {
		err = checkServer(ctx, c)
	}
	if err != nil {
		c.Disconnect(context.Background())
		return nil, err
	}
	return c, nil
}

// invalid wraps idforge.ErrInvalidArgument without repeating its text,
// which the caller's message adds.
type invalid struct{ error }

func (e invalid) Unwrap() error { return idforge.ErrInvalidArgument }

func checkServer(ctx context.Context, client *mongo.Client) error {
	var info bson.M
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return fmt.Errorf("buildInfo: %w", err)
	}
	if v, ok := info["ferretdbVersion"]; ok {
		return invalid{fmt.Errorf("the server is FerretDB %v, which applies findAndModify and update as a read and then a write, not atomically: "+
			"concurrent increments could repeat values; use MongoDB, or add allow_ferretdb=true for a FerretDB that runs one command at a time (tools/ferretdb's test server)", v)}
	}
	return nil
}

// IntegerTypes are the BSON types idforge reads as integers in its
// documents, for a $type filter: what it writes (long) and what a hand
// edit with NumberInt leaves (int). A double, what the mongo shell writes
// for a plain number, is refused: it cannot hold every int64.
var IntegerTypes = bson.A{"int", "long"}

// Integer returns v as an int64 when it is of IntegerTypes.
func Integer(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt64:
		return v.Int64OK()
	case bson.TypeInt32:
		n, ok := v.Int32OK()
		return int64(n), ok
	}
	return 0, false
}

// retryableCodes are server error codes after which the next attempt may
// find a primary: HostUnreachable, HostNotFound, WriteConcernFailed,
// NetworkTimeout, ShutdownInProgress, PrimarySteppedDown,
// ExceededTimeLimit, SocketException, NotWritablePrimary,
// InterruptedAtShutdown, InterruptedDueToReplStateChange,
// NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
var retryableCodes = []int{6, 7, 64, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436}

// Transient reports whether retrying may cure err: the driver's network
// errors, no server to select (no primary for now), and the server's
// errors that say so (a primary stepping down or shutting down, a write
// concern not met). known is false for an error that is not the driver's.
func Transient(err error) (transient, known bool) {
	if mongo.IsNetworkError(err) {
		return true, true
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		if se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("NetworkError") {
			return true, true
		}
		for _, c := range retryableCodes {
			if se.HasErrorCode(c) {
				return true, true
			}
		}
		return false, true
	}
	if errors.Is(err, mongo.ErrClientDisconnected) {
		return false, true
	}
	if errors.As(err, new(topology.ServerSelectionError)) {
		return true, true
	}
	return false, false
}
