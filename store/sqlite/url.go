package sqlite

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
)

func init() { store.Register("sqlite", openURL) }

// openURL is the store.Opener for the "sqlite" scheme; see pathFromURL.
// The query may set busy_timeout to a Go duration ("busy_timeout=10s").
func openURL(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
	path, err := pathFromURL(u, opts.DataDir)
	if err != nil {
		return nil, err
	}
	o := []Option{WithLogger(opts.Logger)}
	for name, vals := range u.Query() {
		switch name {
		case "busy_timeout":
			d, err := time.ParseDuration(vals[len(vals)-1])
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%w: sqlite URL: busy_timeout %q is not a positive duration",
					idforge.ErrInvalidArgument, vals[len(vals)-1])
			}
			o = append(o, WithBusyTimeout(d))
		default:
			return nil, fmt.Errorf("%w: sqlite URL: unknown parameter %q (known: busy_timeout)",
				idforge.ErrInvalidArgument, name)
		}
	}
	s, err := Open(ctx, path, o...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// pathFromURL returns the database file a "sqlite" store URL names:
//
//	sqlite:///abs/path/idforge.db   /abs/path/idforge.db
//	sqlite:relative/path.db         relative/path.db (from the working directory)
//	sqlite: or sqlite://            <dataDir>/idforge.db (DefaultFileName)
//
// It returns an error wrapping idforge.ErrInvalidArgument when the URL has
// a host or user ("sqlite://name.db" is a host, not a file: write
// "sqlite:name.db"), a fragment, or no path while dataDir is empty. The
// query is not examined.
func pathFromURL(u *url.URL, dataDir string) (string, error) {
	if u.Host != "" || u.User != nil {
		return "", fmt.Errorf("%w: sqlite URL %q has a host; write sqlite:relative/file.db or sqlite:///absolute/file.db",
			idforge.ErrInvalidArgument, u.Redacted())
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("%w: sqlite URL %q has a fragment", idforge.ErrInvalidArgument, u.Redacted())
	}
	path := u.Path
	if u.Opaque != "" {
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", fmt.Errorf("%w: sqlite URL %q: %v", idforge.ErrInvalidArgument, u.Redacted(), err)
		}
		path = p
	}
	if path == "" {
		if dataDir == "" {
			return "", fmt.Errorf("%w: sqlite URL %q gives no file and no data directory is set",
				idforge.ErrInvalidArgument, u.Redacted())
		}
		path = filepath.Join(dataDir, DefaultFileName)
	}
	return filepath.FromSlash(path), nil
}
