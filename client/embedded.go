package client

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
)

// Issuer is what an embedded client issues from: an *issuer.Issuer
// running in this process. The client names it by these methods rather
// than by the issuer package, so that a program using only the remote
// clients does not link the issuer and everything it builds on.
type Issuer interface {
	// Next, NextN, NextStrings and NextSerial issue as the issuer's
	// methods of the same names do; format is NextStrings' text format
	// ("" for the key's own).
	Next(ctx context.Context, key string) (int64, error)
	NextN(ctx context.Context, key string, n int) ([]int64, error)
	NextStrings(ctx context.Context, key string, n int, format string) ([]string, error)
	NextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error)
	// Reserve, Commit, Void and Audit are a gapless serial's, as the
	// issuer's methods of the same names.
	Reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error)
	Commit(ctx context.Context, name, id string) (idforge.Reservation, error)
	Void(ctx context.Context, name, id, reason string) (idforge.Reservation, error)
	Audit(ctx context.Context, name string, from, to int64) ([]idforge.Reservation, int64, error)
	// Snowflake returns the issuer's snowflake generator, nil when it has
	// none; Explain decodes with its layout.
	Snowflake() *snowflake.Generator
	// ExplainPacked decodes a number of a date-packed source.
	ExplainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error)
}

// embedded is a Client over an issuer in this process.
type embedded struct {
	iss    Issuer
	closed atomic.Bool
}

var _ Client = (*embedded)(nil)

// NewEmbedded returns a Client over iss (an *issuer.Issuer), which runs in
// this process (Vesta's embedded mode): no network, the issuer's own
// buffers, and no limit on NextN beyond the issuer's. The caller keeps
// ownership of iss: Close does not close it.
func NewEmbedded(iss Issuer) Client {
	return &embedded{iss: iss}
}

func (e *embedded) Next(ctx context.Context, key string) (int64, error) {
	if e.closed.Load() {
		return 0, errClosed
	}
	return e.iss.Next(ctx, key)
}

func (e *embedded) NextN(ctx context.Context, key string, n int) ([]int64, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	return e.iss.NextN(ctx, key, n)
}

func (e *embedded) NextStrings(ctx context.Context, key string, n int) ([]string, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	return e.iss.NextStrings(ctx, key, n, "")
}

func (e *embedded) NextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	return e.iss.NextSerial(ctx, name, n, params)
}

func (e *embedded) Explain(ctx context.Context, id int64) (Explanation, error) {
	if e.closed.Load() {
		return Explanation{}, errClosed
	}
	g := e.iss.Snowflake()
	if g == nil {
		return Explanation{}, fmt.Errorf("%w: the issuer runs no snowflake generator", idforge.ErrUnavailable)
	}
	return explanation(g.Layout(), id)
}

func (e *embedded) ExplainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	if e.closed.Load() {
		return idforge.Unpacked{}, errClosed
	}
	return e.iss.ExplainPacked(ctx, source, id)
}

func (e *embedded) Key(key string) idforge.BatchGenerator { return keyGen{e, key} }

func (e *embedded) Close() error {
	e.closed.Store(true)
	return nil
}
