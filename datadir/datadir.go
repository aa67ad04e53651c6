// Package datadir manages a node's data directory: the files that make up
// its identity (worker ID, the snowflake time fence) and, for the embedded
// default, its SQLite database.
//
// A data directory belongs to one process at a time. Open takes an
// exclusive lock on it, so a second server, or the CLI while a server runs,
// is refused with idforge.ErrLocked instead of issuing duplicates from a
// shared identity. The lock is an advisory flock(2) held on a file
// (LockFileEx on Windows); the kernel drops it when the process dies, so a
// crashed node never leaves a stale lock behind.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// File names inside a data directory.
const (
	LockFile      = "LOCK"
	WorkerIDFile  = "worker-id"
	TimeFenceFile = "snowflake-time"
	SQLiteFile    = "idforge.db"
)

// Dir is an open, locked data directory.
type Dir struct {
	path string
	lock *os.File
}

// Open creates path if needed and locks it for this process. It returns an
// error wrapping idforge.ErrLocked, naming the holder's PID when known, if
// another process holds the directory.
func Open(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("data directory %q: %w", path, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	lockPath := filepath.Join(abs, LockFile)
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		holder, _ := os.ReadFile(lockPath)
		f.Close()
		if errors.Is(err, errHeld) {
			who := "another process"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who = "process " + pid
			}
			return nil, fmt.Errorf("%w: %s is held by %s; stop it, or give this process its own --data directory", idforge.ErrLocked, abs, who)
		}
		return nil, fmt.Errorf("data directory lock %s: %w", lockPath, err)
	}
	// Record who holds the lock, for the message above. The lock itself is
	// the file lock, not the content.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Dir{path: abs, lock: f}, nil
}

// Path returns the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// File returns the path of name inside the directory.
func (d *Dir) File(name string) string { return filepath.Join(d.path, name) }

// TimeFence returns the snowflake time fence kept in the directory.
func (d *Dir) TimeFence() *TimeFence { return &TimeFence{path: d.File(TimeFenceFile)} }

// Close releases the lock. It is idempotent.
func (d *Dir) Close() error {
	if d.lock == nil {
		return nil
	}
	d.lock.Truncate(0)
	err := d.lock.Close() // closing the descriptor drops the lock
	d.lock = nil
	return err
}

// TimeFence stores the snowflake generator's time bound in a file. Each
// Store replaces the file atomically (write, fsync, rename, fsync the
// directory), so a crash leaves either the old or the new bound, never a
// torn one.
type TimeFence struct {
	path string
}

// Load returns the stored bound, or the zero Time when none was stored. A
// file that cannot be parsed is an error: without it the generator cannot
// know which times it has used.
func (f *TimeFence) Load() (time.Time, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("time fence: %w", err)
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || ms < 0 {
		return time.Time{}, fmt.Errorf("time fence %s is corrupt (%q): it records the newest time this node issued; restore it, or delete it only if you are sure the clock never ran ahead of now", f.path, b)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// Store durably records t, rounded up to the millisecond.
func (f *TimeFence) Store(t time.Time) error {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return WriteFileAtomic(f.path, []byte(strconv.FormatInt(ms, 10)+"\n"))
}

// WriteFileAtomic replaces path with data so that after a crash the file
// holds either its old or its new content, and the new content is on
// stable storage when it returns.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
