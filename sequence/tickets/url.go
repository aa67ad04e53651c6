package tickets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/rotate"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/sequence"
)

func init() {
	scheme := sequence.Scheme{Name: "tickets+mysql", Form: "tickets+mysql://user:password@host1:3306/db?also=host2:3306/db",
		Doc: "Flickr-style ticket servers"}
	sequence.Register(scheme, openSource)
	sequence.RegisterRepairer(scheme, repairURL)
}

// spec is one server named by a URL.
type spec struct {
	where string
	names names
	cfg   *mysql.Config
}

// options are the URL parameters besides the servers.
type options struct {
	rescue  time.Duration
	maxOpen int
	timeout time.Duration
}

// parseServers returns the servers rawURL names (itself, then those of
// its also parameter) and its options. The scheme may be tickets+mysql
// or mysql.
func parseServers(rawURL string) ([]spec, options, error) {
	u, err := dsn.Parse(rawURL, "tickets URL")
	if err != nil {
		return nil, options{}, err
	}
	q := dsn.NewQuery(u, "tickets URL")
	if u.Scheme != "tickets+mysql" && u.Scheme != "mysql" {
		return nil, options{}, q.Errorf("scheme %q: want tickets+mysql (or mysql)", u.Scheme)
	}
	table := q.String("table", DefaultTable)
	also := q.List("also")
	o := options{
		rescue:  q.Duration("rescue", DefaultRescue, time.Millisecond),
		maxOpen: int(q.Int("max_open_conns", sqldb.DefaultMaxOpenConns, 1, 10000)),
		timeout: q.Duration("timeout", sqldb.DefaultTimeout, time.Millisecond),
	}
	if err := q.Err(); err != nil {
		return nil, o, err
	}
	if !sqldb.ValidIdent(table) || len(table) > 57 {
		return nil, o, q.Errorf("table %q: want up to 57 letters, digits and _", table)
	}
	places, err := sqldb.Places(sqldb.StripScheme(u), also)
	if err != nil {
		return nil, o, q.Errorf("%v", err)
	}
	rest := q.Rest().Encode()
	var out []spec
	for _, p := range places {
		p.RawQuery = rest
		pq := dsn.NewQuery(p, "tickets URL")
		cfg, err := mysql.FromURL(p, pq)
		if err != nil {
			return nil, o, err
		}
		cfg = mysql.Normalize(cfg, o.timeout)
		if _, set := cfg.Params["auto_increment_increment"]; set {
			return nil, o, pq.Errorf("auto_increment_increment is the servers' configuration, not a URL parameter")
		}
		if _, set := cfg.Params["auto_increment_offset"]; set {
			return nil, o, pq.Errorf("auto_increment_offset is the servers' configuration, not a URL parameter")
		}
		c := *p
		c.RawQuery = ""
		out = append(out, spec{where: dsn.Redacted(&c), names: newNames(table), cfg: cfg})
	}
	return out, o, nil
}

// adminDB opens a small pool on the server whose sessions keep the
// server's own increment and offset.
func (sp spec) adminDB() (*sql.DB, error) {
	db, err := mysql.OpenDB(sp.cfg)
	if err != nil {
		return nil, fmt.Errorf("ticket server %s: %w", sp.where, err)
	}
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	return db, nil
}

// openSource is the sequence.Opener of "tickets+mysql".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	specs, o, err := parseServers(u.String())
	if err != nil {
		return nil, err
	}
	return open(ctx, specs, o)
}

func open(ctx context.Context, specs []spec, o options) (*Source, error) {
	src := &Source{rotor: rotate.New("tickets source", len(specs), o.rescue), timeout: o.timeout}
	var errs []error
	for _, sp := range specs {
		admin, err := sp.adminDB()
		if err != nil {
			src.Close()
			return nil, err
		}
		s := &server{where: sp.where, names: sp.names, base: sp.cfg, admin: admin, maxOpen: o.maxOpen}
		src.servers = append(src.servers, s)
		rctx, cancel := context.WithTimeout(ctx, o.timeout)
		_, err = s.reload(rctx, nil)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("ticket server %s: %w", sp.where, err))
		}
	}
	if len(errs) == len(specs) {
		src.Close()
		return nil, fmt.Errorf("tickets source: no server is ready: %w", errors.Join(errs...))
	}
	return src, nil
}
