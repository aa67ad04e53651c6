package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/dsn"
)

func init() {
	Register(Scheme{Name: "static", Form: "static://7", Doc: "the fixed worker ID 7 (or just 7)"}, openStatic)
	Register(Scheme{Name: "file", Form: "file:///abs/path",
		Doc: "an ID chosen once and kept in the file (file:rel/path is relative; the default is worker-id in the data directory)"}, openFile)
}

// openStatic is the Opener of static://N.
func openStatic(_ context.Context, u *url.URL, _ Options) (Provider, error) {
	n, err := strconv.ParseInt(u.Host+u.Opaque, 10, 64)
	if err != nil {
		return nil, dsn.NewQuery(u, "worker URL").Errorf("want static://<number>")
	}
	return Static(n), nil
}

// openFile is the Opener of file:///abs/path and file:rel/path.
func openFile(_ context.Context, u *url.URL, _ Options) (Provider, error) {
	p := u.Path
	if u.Opaque != "" {
		p = u.Opaque
	}
	if p == "" {
		return nil, dsn.NewQuery(u, "worker URL").Errorf("file URL without a path")
	}
	return File(p), nil
}

// Static returns a Provider that always hands out id.
func Static(id int64) Provider { return static(id) }

type static int64

func (s static) Acquire(ctx context.Context, max int64) (Lease, error) {
	if int64(s) < 0 || int64(s) > max {
		return nil, fmt.Errorf("%w: worker ID %d, the layout allows 0..%d", idforge.ErrInvalidWorker, int64(s), max)
	}
	return fixedLease(s), nil
}

func (s static) Describe() string { return fmt.Sprintf("static worker ID %d", int64(s)) }

// File returns a Provider that reads the worker ID from a file holding one
// decimal number. When the file does not exist, a random ID in [0, max] is
// chosen and written to it, so the node keeps its ID across restarts.
//
// A random ID is only a guess at uniqueness: two nodes that both choose
// will collide with probability 1/(max+1). Give every node of a cluster its
// own ID explicitly, or use a coordinator.
func File(path string) Provider { return file(path) }

type file string

func (f file) Describe() string { return "worker ID file " + string(f) }

func (f file) Acquire(ctx context.Context, max int64) (Lease, error) {
	path := string(f)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		n, err := rand.Int(rand.Reader, big.NewInt(max+1))
		if err != nil {
			return nil, err
		}
		id := n.Int64()
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, err
		}
		if err := datadir.WriteFileAtomic(path, []byte(strconv.FormatInt(id, 10)+"\n")); err != nil {
			return nil, fmt.Errorf("saving worker ID: %w", err)
		}
		return fixedLease(id), nil
	}
	if err != nil {
		return nil, fmt.Errorf("worker ID file: %w", err)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: worker ID file %s holds %q, want one decimal number", idforge.ErrInvalidWorker, path, b)
	}
	if id < 0 || id > max {
		return nil, fmt.Errorf("%w: worker ID %d from %s, the layout allows 0..%d", idforge.ErrInvalidWorker, id, path, max)
	}
	return fixedLease(id), nil
}
