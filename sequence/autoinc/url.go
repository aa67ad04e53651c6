package autoinc

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	_ "github.com/idforge/idforge/internal/sqldb/mysql"    // mysql
	_ "github.com/idforge/idforge/internal/sqldb/postgres" // postgres, postgresql
	_ "github.com/idforge/idforge/internal/sqldb/sqlite"   // sqlite
	"github.com/idforge/idforge/sequence"
)

// DefaultTablePrefix names the tables of a source opened from a URL
// without a table parameter: idforge_autoinc_0, idforge_autoinc_1, ….
const DefaultTablePrefix = "idforge_autoinc"

func init() {
	for db, form := range sqldb.Forms() {
		scheme := sequence.Scheme{Name: "autoinc+" + db, Form: "autoinc+" + form + "?tables=4",
			Doc: "id << n | table over 2^n auto-increment tables"}
		sequence.Register(scheme, openSource)
		sequence.RegisterRepairer(scheme, repairURL)
	}
}

// target is what a source URL names: its tables, spread over its
// databases in turn, opened.
type target struct {
	cfg  config
	tdbs []*sqldb.DB // per table
	dbs  []*sqldb.DB // each database once
}

func (t *target) close() {
	for _, d := range t.dbs {
		d.Close()
	}
}

// openTarget parses a source URL and opens its databases.
func openTarget(ctx context.Context, u *url.URL) (*target, error) {
	q := dsn.NewQuery(u, "autoinc source URL")
	n := q.Int("tables", 1, 1, MaxTables)
	prefix := q.String("table", DefaultTablePrefix)
	also := q.List("also")
	rescue := q.Duration("rescue", DefaultRescue, time.Millisecond)
	create := q.Bool("create", true)
	if err := q.Err(); err != nil {
		return nil, err
	}
	if n&(n-1) != 0 {
		return nil, q.Errorf("tables=%d: want a power of two from 1 to %d", n, MaxTables)
	}
	if !sqldb.ValidIdent(fmt.Sprintf("%s_%d", prefix, n-1)) {
		return nil, q.Errorf("table %q: want up to 57 letters, digits and _", prefix)
	}
	base := sqldb.StripScheme(u)
	places, err := sqldb.Places(base, also)
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	rest := q.Rest().Encode()
	t := &target{cfg: config{Rescue: rescue, NoCreate: !create}}
	for _, p := range places {
		p.RawQuery = rest
		d, err := sqldb.Open(ctx, p, dsn.NewQuery(p, "autoinc source URL"), sqldb.Settings{}, "")
		if err != nil {
			t.close()
			return nil, err
		}
		t.dbs = append(t.dbs, d)
	}
	for i := range int(n) {
		d := t.dbs[i%len(t.dbs)]
		t.cfg.Tables = append(t.cfg.Tables, tableSpec{DB: d.DB, Name: fmt.Sprintf("%s_%d", prefix, i)})
		t.tdbs = append(t.tdbs, d)
	}
	return t, nil
}

// openSource is the sequence.Opener of "autoinc+mysql", "autoinc+postgres"
// and "autoinc+sqlite".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	t, err := openTarget(ctx, u)
	if err != nil {
		return nil, err
	}
	s, err := newSource(ctx, t.cfg, t.tdbs)
	if err != nil {
		t.close()
		return nil, err
	}
	s.owned = t.dbs
	return s, nil
}
