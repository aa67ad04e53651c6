package tickets

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
)

// Repair says how RepairFailover raises ticket servers.
type Repair struct {
	// Floor is a ticket at or above every ticket the servers ever handed
	// out: each server issues above it from now on. It must be at least 1.
	Floor int64
	// NoAccept raises the servers but leaves their fences as they are:
	// closed after a fail-over, so nothing is handed out until a later
	// repair (or another one of the same database, such as the segment
	// store's) accepts the server. Raise every kind of row of a database
	// before any repair accepts its server.
	NoAccept bool
}

// Repaired is what RepairFailover did to one ticket server.
type Repaired struct {
	// Server is the server's address and database, without password.
	Server string
	// Before is its failover fence as it was.
	Before idforge.FailoverState
	// Base is the server's base now: it issues tickets above it.
	Base int64
}

// repairURL is the sequence.Repairer of "tickets+mysql": RepairFailover
// on the servers a URL names.
func repairURL(ctx context.Context, u *url.URL, r sequence.Repair) (string, error) {
	done, err := RepairFailover(ctx, []string{u.String()}, Repair{Floor: r.Floor, NoAccept: r.NoAccept})
	if err != nil {
		return "", err
	}
	said := make([]string, len(done))
	for i, d := range done {
		said[i] = fmt.Sprintf("ticket server %s issues tickets above %d on %q", d.Server, d.Base, d.Before.Current)
	}
	return strings.Join(said, "; ") + " from now on", nil
}

// RepairFailover puts ticket servers back into service after a database
// server failed over to a replica that may lack the last tickets (the
// failover fence, idforge_fence, names another server, and the Source
// leaves the server aside with an error wrapping
// idforge.ErrStoreFailedOver). On every server the URLs name (as for
// Expand), under the expansion lock and in one transaction, it moves the
// auto-increment counter past the first ticket of the server's residue
// above r.Floor and raises the configuration's base to it (unless the
// server is there already: repairing twice leaves no second gap), and,
// unless r.NoAccept, records the server the database runs on in the
// fence. A server that an interrupted expansion capped keeps its ceiling:
// if the floor is above it, the server issues again once Expand finishes.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a floor
// below 1, a server not configured or without the fence (configured
// before idforge fenced ticket servers: run Expand with the same servers
// to create it).
func RepairFailover(ctx context.Context, servers []string, r Repair) ([]Repaired, error) {
	if r.Floor < 1 {
		return nil, fmt.Errorf("%w: tickets repair: floor %d is below 1", idforge.ErrInvalidArgument, r.Floor)
	}
	as, err := openAdmins(servers)
	if err != nil {
		return nil, err
	}
	defer closeAdmins(as)
	var out []Repaired
	for _, a := range as {
		if err := a.takeLock(ctx); err != nil {
			return out, err
		}
		done, err := a.repair(ctx, r)
		if err != nil {
			return out, fmt.Errorf("tickets repair: ticket server %s: %w", a.where, err)
		}
		out = append(out, done)
	}
	return out, nil
}

func (a *admin) repair(ctx context.Context, r Repair) (Repaired, error) {
	done := Repaired{Server: a.where}
	f, err := fenceOf(ctx, a.db, false)
	if err != nil {
		return done, err
	}
	if f == nil {
		return done, fmt.Errorf("%w: no failover fence (configured before idforge fenced ticket servers: run tickets expand with the same servers to create it)",
			idforge.ErrInvalidArgument)
	}
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return done, err
	}
	defer tx.Rollback()
	c, ok, err := a.names.readConfig(ctx, tx, true)
	if err != nil || !ok {
		return done, errors.Join(err, errIf(!ok, fmt.Errorf("%w: %w", idforge.ErrInvalidArgument, errUnconfigured)))
	}
	done.Base = c.base
	m, err := a.names.maxID(ctx, tx)
	if err != nil {
		return done, err
	}
	if max(m, c.base) < r.Floor {
		if done.Base, err = a.raise(ctx, tx, r.Floor, c.servers, c.position); err != nil {
			return done, err
		}
		// A new generation: the clients reload, and refuse any ticket
		// at or below the new base.
		if _, err := tx.ExecContext(ctx, "UPDATE "+a.names.qc+" SET base = ?, gen = gen + 1 WHERE id = 1", done.Base); err != nil {
			return done, err
		}
	}
	accept := f.Accept
	if r.NoAccept {
		accept = f.Read
	}
	before, err := accept(ctx, tx)
	if err != nil {
		return done, err
	}
	done.Before = before
	return done, tx.Commit()
}
