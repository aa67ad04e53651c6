package tickets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/rotate"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/sequence"
)

// DefaultRescue is how long a failing server is left aside when the URL
// gives no rescue parameter.
const DefaultRescue = 5 * time.Second

// Sentinel conditions of one server, reported inside the Source's errors.
var (
	errUnconfigured = errors.New("not configured: run tickets.Expand (idforge tickets expand) over the servers")
	errFull         = errors.New("reached the ceiling an expansion in progress set; it issues again once the expansion switches it")
)

// server is one ticket server as a Source sees it.
type server struct {
	where   string // for messages, without the password
	names   names
	base    *mysql.Config // without the session variables
	admin   *sql.DB       // reads the configuration
	maxOpen int

	mu    sync.Mutex // serialises reloads
	state atomic.Pointer[state]

	highest atomic.Int64 // the highest ticket handed out
}

// state is a server's configuration with a pool whose sessions use it.
type state struct {
	config
	db   *sql.DB // sessions with auto_increment_increment = servers, _offset = position
	full atomic.Bool
	// replace takes a ticket; it holds the failover fence's condition
	// when the server has one (fence not nil): on a replica promoted
	// after a fail-over it inserts nothing.
	replace string
	fence   *sqldb.Fence
}

// Source issues tickets from N Flickr-style ticket servers in turn. It is
// safe for concurrent use.
type Source struct {
	servers []*server
	rotor   *rotate.Rotor
	timeout time.Duration
	closed  atomic.Bool
}

var (
	_ sequence.Source         = (*Source)(nil)
	_ sequence.StatusReporter = (*Source)(nil)
)

// next returns one ticket of s.
func (s *server) next(ctx context.Context) (int64, error) {
	st := s.state.Load()
	for attempt := 0; ; attempt++ {
		if st == nil || st.full.Load() {
			var err error
			if st, err = s.reload(ctx, st); err != nil {
				return 0, err
			}
			if st.full.Load() {
				return 0, errFull
			}
		}
		res, err := st.db.ExecContext(ctx, st.replace, st.gen)
		if err != nil {
			if cur := s.state.Load(); cur != st && attempt < 2 {
				st = cur // the pool was replaced under us
				continue
			}
			return 0, err
		}
		rows, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		if rows == 0 { // the configuration changed (or the fence closed): reload, try again
			if st.fence != nil {
				if err := st.fence.Check(ctx, s.admin, s.where); err != nil {
					return 0, err
				}
			}
			if attempt >= 2 {
				return 0, errors.New("the configuration keeps changing; try again")
			}
			if st, err = s.reload(ctx, st); err != nil {
				return 0, err
			}
			continue
		}
		id, err := res.LastInsertId()
		if err != nil {
			return 0, err
		}
		return st.check(id)
	}
}

// check vets a ticket against the configuration it was issued under.
func (st *state) check(id int64) (int64, error) {
	switch {
	case id <= 0:
		return 0, rotate.Exhausted(fmt.Errorf("%w: ticket beyond the largest int64", idforge.ErrSpaceExhausted))
	case st.ceiling != 0 && id > st.ceiling:
		st.full.Store(true)
		return 0, errFull
	case id <= st.base || (id-st.position)%st.servers != 0:
		// The session did not use the configured increment and offset:
		// never hand such a value out.
		return 0, fmt.Errorf("ticket %d does not fit the configuration (above %d, %d mod %d)", id, st.base, st.position, st.servers)
	}
	return id, nil
}

// reload reads the server's configuration and, when the increment or
// offset changed, opens a pool whose sessions use the new ones. old is
// the state the caller saw; if another goroutine replaced it meanwhile,
// that one is returned.
func (s *server) reload(ctx context.Context, old *state) (*state, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.state.Load(); cur != old && cur != nil {
		return cur, nil
	}
	c, ok, err := s.names.readConfig(ctx, s.admin, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errUnconfigured
	}
	if c.servers < 1 || c.position < 1 || c.position > c.servers {
		return nil, fmt.Errorf("configuration is corrupt: position %d of %d servers", c.position, c.servers)
	}
	if old != nil && old.gen == c.gen {
		return old, nil
	}
	st := &state{config: c, replace: s.names.replace("")}
	if st.fence, err = fenceOf(ctx, s.admin, false); err != nil {
		return nil, err
	}
	if st.fence != nil {
		st.replace = s.names.replace(st.fence.Cond())
	}
	if old != nil && old.servers == c.servers && old.position == c.position {
		st.db = old.db
	} else {
		cfg := s.base.Clone()
		cfg.Params = maps.Clone(cfg.Params)
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["auto_increment_increment"] = strconv.FormatInt(c.servers, 10)
		cfg.Params["auto_increment_offset"] = strconv.FormatInt(c.position, 10)
		if st.db, err = mysql.OpenDB(cfg); err != nil {
			return nil, err
		}
		st.db.SetMaxOpenConns(s.maxOpen)
		st.db.SetMaxIdleConns(s.maxOpen)
		if old != nil {
			go old.db.Close() // waits for queries in flight
		}
	}
	s.state.Store(st)
	return st, nil
}

// Next returns a ticket from the next server in turn: REPLACE INTO
// <table> (stub) VALUES ('a') on a session whose auto_increment_increment
// and _offset are the server's configuration, guarded so that it inserts
// only while that configuration is current, and the ticket comes back as
// the statement's LAST_INSERT_ID. A server that fails is left aside for
// the rescue time; the next one is tried. It returns an error wrapping
// idforge.ErrUnavailable with every server's error when none can issue
// (idforge.ErrStoreFailedOver too when a server's failover fence names
// another server: see RepairFailover; idforge.ErrSpaceExhausted alone
// when every server is used up), and idforge.ErrClosed after Close.
func (src *Source) Next(ctx context.Context) (int64, error) {
	return src.rotor.Next(ctx, src.closed.Load(), func(ctx context.Context, i int) (int64, error) {
		s := src.servers[i]
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, src.timeout)
			defer cancel()
		}
		id, err := s.next(ctx)
		if err != nil {
			return 0, fmt.Errorf("ticket server %s: %w", s.where, err)
		}
		atomicmax.Raise(&s.highest, id)
		return id, nil
	})
}

// Status reports the ticket servers for operators
// (sequence.StatusReporter): each one's state (set aside for the rescue
// time after a failure), calls, failures, times set aside, latest error
// and the highest ticket it handed out. The source is Down when no server is admitted,
// Degraded when some server is set aside.
func (src *Source) Status() sequence.Status {
	return src.rotor.Status("tickets", func(i int) string { return src.servers[i].where },
		func(i int) int64 { return src.servers[i].highest.Load() })
}

// Close closes the source's pools. It is idempotent.
func (src *Source) Close() error {
	if src.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, s := range src.servers {
		if st := s.state.Load(); st != nil {
			errs = append(errs, st.db.Close())
		}
		errs = append(errs, s.admin.Close())
	}
	return errors.Join(errs...)
}
