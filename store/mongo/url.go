package mongo

import (
	"cmp"
	"math"
	"net/url"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

func init() {
	open := sqlstore.URLOpener(fromURL, Open)
	store.Register(store.Scheme{Name: "mongodb", Form: "mongodb://user:password@host1,host2,host3/idforge?replicaSet=rs0",
		Doc: "MongoDB (w=majority)"}, open)
	store.Register(store.Scheme{Name: "mongodb+srv", Form: "mongodb+srv://user:password@cluster.example.com/idforge",
		Doc: "MongoDB, hosts from DNS SRV records"}, open)
}

// ParseURL converts a store URL into a Config:
//
//	mongodb://[user:password@]host[:port][,host[:port]…]/database?param=value&…
//	mongodb+srv://[user:password@]host/database?param=value&…
//
// idforge's own parameters, listed in the package documentation, are
// taken out; the rest is the driver's connection string (replicaSet,
// authSource, tls, w, journal, readConcernLevel, readPreference, …).
// Unless the URL sets them, writes use w=majority and reads the majority
// read concern; a URL that weakens either is refused without
// allow_weak_writes=true or allow_weak_reads=true. A mongodb+srv:// URL
// has its hosts looked up in DNS here.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a URL that
// does not parse, has another scheme, a fragment, no host, a bad database
// name, a bad idforge parameter value, a weakened concern or anything the
// driver rejects. Errors show the URL with the password replaced by
// "xxxxx".
func ParseURL(rawURL string) (Config, error) {
	u, err := dsn.Parse(rawURL, "mongodb URL")
	if err != nil {
		return Config{}, err
	}
	return fromURL(u, store.Options{})
}

// fromURL is ParseURL's work, with the Options of store.Open.
func fromURL(u *url.URL, opts store.Options) (Config, error) {
	q := dsn.NewQuery(u, "mongodb URL")
	if err := mongoconn.Check(u); err != nil {
		return Config{}, q.Errorf("%v", err)
	}
	explicitNoRetries := q.Has("retries")
	cfg := Config{
		Timeout:    q.Duration("timeout", 0, time.Millisecond),
		Retries:    int(q.Int("retries", 0, 0, math.MaxInt32)),
		ForMigrate: opts.ForMigrate,
		Logger:     opts.Logger,
	}
	if explicitNoRetries && cfg.Retries == 0 {
		cfg.Retries = -1
	}
	weak := mongoconn.TakeWeak(q)
	cfg.AllowFerretDB = q.Bool("allow_ferretdb", false)
	if err := q.Err(); err != nil {
		return Config{}, err
	}
	cfg.Database, _ = mongoconn.Database(u)
	client, err := mongoconn.Config(u, q.Rest(), weak, cmp.Or(cfg.Timeout, DefaultTimeout))
	if err != nil {
		return Config{}, q.Errorf("%v", err)
	}
	cfg.Client = client
	return cfg, nil
}
