package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/idforge/idforge/datadir"
)

// CacheFile is the name of the worker-ID cache in the data directory.
const CacheFile = "worker-cache.json"

// Cache is the local copy of a coordinated worker ID. When the coordinator
// is unreachable at start-up, a node may resume the ID from it, as Leaf
// does, but only within the validity the coordinator last granted: until
// then nobody else can have been given the ID. A lease that never expires
// (ZooKeeper's registrations are permanent) is cached without a limit.
type Cache struct {
	path     string
	provider string
	owner    string
}

// NewCache returns the cache in dataDir for a provider (its redacted URL)
// and this node's owner string; entries written for another provider or
// owner are ignored.
func NewCache(dataDir, provider, owner string) *Cache {
	return &Cache{path: filepath.Join(dataDir, CacheFile), provider: provider, owner: owner}
}

type cacheEntry struct {
	Provider   string `json:"provider"`
	Owner      string `json:"owner"`
	ID         int64  `json:"id"`
	ValidUntil int64  `json:"valid_until_ms"` // 0: no limit
	LastMs     int64  `json:"last_ms"`
}

// Save records id, valid until validUntil (zero: no limit), with last the
// newest time issued.
func (c *Cache) Save(id int64, validUntil, last time.Time) error {
	e := cacheEntry{Provider: c.provider, Owner: c.owner, ID: id}
	if !validUntil.IsZero() {
		e.ValidUntil = validUntil.UnixMilli()
	}
	if !last.IsZero() {
		e.LastMs = last.UnixMilli()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return datadir.WriteFileAtomic(c.path, append(b, '\n'))
}

// SaveLease records a lease just acquired: its ID, ValidUntil and
// LastTime. A failure is logged to logger as a warning, since the lease
// is good without the cache. A nil Cache records nothing.
func (c *Cache) SaveLease(l Lease, logger *slog.Logger) {
	if c == nil {
		return
	}
	if err := c.Save(l.ID(), l.ValidUntil(), l.LastTime()); err != nil {
		logger.Warn("saving the worker ID cache failed", "worker", l.ID(), "err", err)
	}
}

// Clear forgets the cached ID (after a release or a lost lease).
func (c *Cache) Clear() {
	os.Remove(c.path)
}

// ErrNoCache is returned by Load when there is no usable cached ID.
var ErrNoCache = errors.New("no usable cached worker ID")

// Load returns the cached ID if it was written for this provider and
// owner and is still valid at now.
func (c *Cache) Load(now time.Time) (id int64, validUntil, last time.Time, err error) {
	b, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, time.Time{}, time.Time{}, fmt.Errorf("%w: %s does not exist", ErrNoCache, c.path)
	}
	if err != nil {
		return 0, time.Time{}, time.Time{}, err
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return 0, time.Time{}, time.Time{}, fmt.Errorf("%w: %s is corrupt: %v", ErrNoCache, c.path, err)
	}
	if e.Provider != c.provider || e.Owner != c.owner {
		return 0, time.Time{}, time.Time{}, fmt.Errorf("%w: %s was written for %s as %s", ErrNoCache, c.path, e.Provider, e.Owner)
	}
	if e.ValidUntil != 0 {
		validUntil = time.UnixMilli(e.ValidUntil)
		if !now.Before(validUntil) {
			return 0, time.Time{}, time.Time{}, fmt.Errorf("%w: the cached worker ID %d was valid until %s; another node may hold it now",
				ErrNoCache, e.ID, validUntil.UTC().Format(time.RFC3339Nano))
		}
	}
	if e.LastMs != 0 {
		last = time.UnixMilli(e.LastMs)
	}
	return e.ID, validUntil, last, nil
}
