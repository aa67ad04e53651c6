package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/wait"
)

// DB is a pool with its dialect.
type DB struct {
	*sql.DB
	*Dialect
	// Where names the database in messages, without secrets.
	Where string
	// Timeout bounds calls whose context has no deadline (see Ctx).
	Timeout time.Duration
	owned   bool
}

// Open opens the pool of u, whose scheme is one of a registered
// dialect's (a caller strips its own prefix, such as "sqlrow+", with
// StripScheme), and pings it. It takes timeout from q, and
// max_open_conns for a server when set leaves MaxOpenConns zero (set's
// defaults when absent); the engine takes its own parameters and leaves
// the rest to the driver. dataDir is where "sqlite:" points
// ("" refuses it). The errors about u are q's; a database that does not
// answer is an error naming it.
func Open(ctx context.Context, u *url.URL, q *dsn.Query, set Settings, dataDir string) (*DB, error) {
	db, err := OpenPool(u, q, set, dataDir)
	if err != nil {
		return nil, err
	}
	pctx, cancel := db.Ctx(ctx)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.DB.Close()
		return nil, fmt.Errorf("%s: %w", db.Where, err)
	}
	return db, nil
}

// OpenPool is Open without the ping: it does not connect.
func OpenPool(u *url.URL, q *dsn.Query, set Settings, dataDir string) (*DB, error) {
	d := Lookup(u.Scheme)
	if d == nil {
		return nil, q.Errorf("database scheme %q (want mysql, postgres or sqlite)", u.Scheme)
	}
	if set.MaxOpenConns == 0 && !d.FileLock {
		set.MaxOpenConns = int(q.Int("max_open_conns", 0, 1, 10000))
	}
	set.Timeout = q.Duration("timeout", set.Timeout, time.Millisecond)
	if err := q.Err(); err != nil {
		return nil, err
	}
	if set.MaxOpenConns == 0 {
		set.MaxOpenConns = d.MaxOpenDefault
	}
	set, err := set.WithDefaults(d.Name)
	if err != nil {
		return nil, err
	}
	pool, err := d.Open(u, q, set, dataDir)
	if err != nil {
		return nil, err
	}
	set.Apply(pool)
	where := *u
	where.RawQuery, where.Fragment = "", ""
	return &DB{DB: pool, Dialect: d, Where: dsn.Redacted(&where), Timeout: set.Timeout, owned: true}, nil
}

// Wrap returns db with its dialect, found from its driver among the
// registered ones. The caller keeps owning db: Close does not close it.
func Wrap(db *sql.DB) (*DB, error) {
	for _, d := range Dialects() {
		if d.Owns(db.Driver()) {
			return &DB{DB: db, Dialect: d, Where: d.Name + " database", Timeout: DefaultTimeout}, nil
		}
	}
	return nil, fmt.Errorf("unsupported database driver %T (want go-sql-driver/mysql, pgx stdlib or modernc sqlite)", db.Driver())
}

// Migrate is the body of the exported Migrate functions of the sequence
// backends, which take a plain pool: it finds db's dialect, checks the
// table name and runs create. Its errors wrap idforge.ErrInvalidArgument
// and start with who ("sqlrow").
func Migrate(ctx context.Context, db *sql.DB, who, table string, create func(context.Context, *DB, string) error) error {
	d, err := Wrap(db)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", idforge.ErrInvalidArgument, who, err)
	}
	if !ValidIdent(table) {
		return fmt.Errorf("%w: %s: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, who, table)
	}
	return create(ctx, d, table)
}

// Close closes the pool if Open opened it.
func (db *DB) Close() error {
	if db.owned {
		return db.DB.Close()
	}
	return nil
}

// Ctx bounds ctx by the pool's timeout unless it has a deadline.
func (db *DB) Ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, db.Timeout)
}

// Retry runs fn, bounded by the pool's timeout, and again (at most twice
// more, after 20 and 40 ms) while it fails with a transient error. fn
// must be safe to repeat: a repeated increment may leave a gap, never a
// duplicate.
func (db *DB) Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := db.Ctx(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil || attempt == 2 || !IsTransient(err) {
			return err
		}
		if wait.For(ctx, time.Duration(20<<attempt)*time.Millisecond) != nil {
			return err
		}
	}
}

// HasTable tells whether db's database has the table.
func (db *DB) HasTable(ctx context.Context, q Querier, table string) (bool, error) {
	var ok bool
	if err := q.QueryRowContext(ctx, db.Rebind(db.TableExists), table).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: look for table %s: %w", db.Where, table, err)
	}
	return ok, nil
}

// Forms are the URLs Open takes, by scheme, for help texts.
func Forms() map[string]string {
	out := map[string]string{}
	for _, d := range Dialects() {
		for _, s := range d.Schemes {
			out[s] = s + strings.TrimPrefix(d.Form, d.Name)
		}
	}
	return out
}

// StripScheme returns a copy of u with the prefix "<strategy>+" removed
// from its scheme ("sqlrow+mysql" → "mysql").
func StripScheme(u *url.URL) *url.URL {
	c := *u
	if i := strings.IndexByte(c.Scheme, '+'); i >= 0 {
		c.Scheme = c.Scheme[i+1:]
	}
	return &c
}

// Places returns the databases a URL names: its own, then one per item
// of also, which for MySQL and PostgreSQL is "host:port/database" (the
// user, password and parameters are base's) and for SQLite a file path.
func Places(base *url.URL, also []string) ([]*url.URL, error) {
	out := []*url.URL{base}
	for _, a := range also {
		p := *base
		if base.Scheme == "sqlite" {
			p.Opaque, p.Path = "", a
			if !strings.HasPrefix(a, "/") {
				p.Opaque, p.Path = url.PathEscape(a), ""
			}
		} else {
			host, db, ok := strings.Cut(a, "/")
			if !ok || host == "" || db == "" || strings.Contains(db, "/") {
				return nil, fmt.Errorf("also=%q: want host:port/database", a)
			}
			p.Host, p.Path, p.RawPath = host, "/"+db, ""
		}
		out = append(out, &p)
	}
	return out, nil
}
