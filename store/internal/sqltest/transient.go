package sqltest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/idforge/idforge/store/internal/claim"
)

// TransientCase is an error and whether a claim that failed with it
// should be tried again.
type TransientCase struct {
	Err  error
	Want bool
}

// CheckTransient checks claim.Transient with a dialect's
// ClassifyError, on the dialect's own cases and then on errors every
// driver meets.
func CheckTransient(t *testing.T, classify func(error) (transient, known bool), cases []TransientCase) {
	t.Helper()
	common := []TransientCase{
		{driver.ErrBadConn, true},
		{io.ErrUnexpectedEOF, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "refused"}}, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{syscall.ECONNRESET, true},
		{nil, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false}, // a net.Error, but the caller's
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{sql.ErrNoRows, false},
		{errors.New("sql: database is closed"), false},
	}
	for _, tt := range append(cases, common...) {
		if got := claim.Transient(tt.Err, classify); got != tt.Want {
			t.Errorf("transient(%v) = %v, want %v", tt.Err, got, tt.Want)
		}
	}
}
