package sqlrow

import (
	"context"
	"math"
	"net/url"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	_ "github.com/idforge/idforge/internal/sqldb/mysql"    // mysql
	_ "github.com/idforge/idforge/internal/sqldb/postgres" // postgres, postgresql
	_ "github.com/idforge/idforge/internal/sqldb/sqlite"   // sqlite
	"github.com/idforge/idforge/sequence"
)

func init() {
	for db, form := range sqldb.Forms() {
		source := sequence.Scheme{Name: "sqlrow+" + db, Form: "sqlrow+" + form + "?name=orders",
			Doc: "current_value + 1 on a named row"}
		counter := sequence.Scheme{Name: db, Form: form + "?name=waybill&period=day",
			Doc: "per-period counters in SQL rows"}
		sequence.Register(source, openSource)
		sequence.RegisterCounter(counter, openCounterStore)
		sequence.RegisterRepairer(source, repairURL)
		sequence.RegisterRepairer(counter, repairURL)
	}
}

// openSource is the sequence.Opener of "sqlrow+mysql", "sqlrow+postgres"
// and "sqlrow+sqlite".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	q := dsn.NewQuery(u, "sqlrow source URL")
	cfg := sourceConfig{
		Name:     q.String("name", ""),
		Table:    q.String("table", DefaultSourceTable),
		Start:    q.Int("start", 1, 1, math.MaxInt64),
		NoCreate: !q.Bool("create", true),
	}
	if err := q.Err(); err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, q.Errorf("%v", err)
	}
	db, err := sqldb.Open(ctx, sqldb.StripScheme(u), q, sqldb.Settings{}, "")
	if err != nil {
		return nil, err
	}
	s, err := newSource(ctx, db, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openCounterStore is the sequence.CounterOpener of "mysql", "postgres"
// and "sqlite".
func openCounterStore(ctx context.Context, u *url.URL, _ string) (sequence.CounterStore, error) {
	q := dsn.NewQuery(u, "sql counter URL")
	cfg := CounterStoreConfig{Table: q.String("table", DefaultCounterTable), NoCreate: !q.Bool("create", true)}
	if err := q.Err(); err != nil {
		return nil, err
	}
	if !sqldb.ValidIdent(cfg.Table) {
		return nil, q.Errorf("table %q: want letters, digits and _", cfg.Table)
	}
	db, err := sqldb.Open(ctx, u, q, sqldb.Settings{}, "")
	if err != nil {
		return nil, err
	}
	s, err := newCounterStore(db, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
