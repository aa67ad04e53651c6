package verify

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"sync"
)

// The sets below keep every value a run saw, as compactly as the kind of
// value allows: segment IDs come in dense runs (a node hands out a whole
// segment in order), so they go into a bitmap of 65,536-ID pages that
// starts each page as a short sorted array (the layout of Roaring
// bitmaps); snowflake IDs are spread over the whole int64 space, so they
// go into an open-addressing hash set of the raw 8-byte values; serials
// are strings of any length, so they are kept as 64-bit hashes in the
// same hash set.

// shards is the number of independently locked parts of a set: a
// goroutine adding a batch locks only the shards its values fall in, and
// a shard that grows copies only its own slots.
const shards = 64

// IDSet is a set of 64-bit values safe for concurrent use. Add reports
// whether the value was new.
type IDSet interface {
	Add(v uint64) bool
	// Len is the number of values added.
	Len() int64
	// Bytes is the memory the set holds for its values.
	Bytes() int64
}

// NewHashSet returns an empty IDSet for values spread over the whole
// 64-bit space (snowflake IDs, hashes): an open-addressing table per shard,
// 8 bytes per slot, grown by half when it is 80% full, so a value costs 10
// to 15 bytes.
func NewHashSet() IDSet { return &hashSet{} }

// NewRangeSet returns an empty IDSet for values that come in dense runs
// (segment IDs): pages of 65,536 values, each a sorted array of 16-bit
// offsets while it holds fewer than 4,096 values and an 8 KiB bitmap after
// that, so a dense run costs one bit a value.
func NewRangeSet() IDSet { return &rangeSet{} }

type hashSet struct {
	shard [shards]hashShard
}

type hashShard struct {
	mu      sync.Mutex
	slots   []uint64 // 0 is an empty slot; the value 0 is hasZero
	n       int64
	hasZero bool
	_       [24]byte // keeps neighbouring shards' locks off one cache line
}

// mix is splitmix64's finalizer: it spreads any values (consecutive IDs
// included) evenly over the table.
func mix(v uint64) uint64 {
	v ^= v >> 30
	v *= 0xbf58476d1ce4e5b9
	v ^= v >> 27
	v *= 0x94d049bb133111eb
	return v ^ v>>31
}

func (s *hashSet) Add(v uint64) bool {
	h := mix(v)
	sh := &s.shard[h>>(64-6)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.add(v, h)
}

func (sh *hashShard) add(v, h uint64) bool {
	if v == 0 {
		if sh.hasZero {
			return false
		}
		sh.hasZero = true
		sh.n++
		return true
	}
	if (sh.n+1)*5 > int64(len(sh.slots))*4 {
		sh.grow()
	}
	if !insert(sh.slots, v, h) {
		return false
	}
	sh.n++
	return true
}

// insert puts v (hashed h) into slots with linear probing and reports
// whether it was absent. The start slot is h mapped onto the table's
// length by multiplication (Lemire's fast range), so the table need not
// be a power of two and can grow by half.
func insert(slots []uint64, v, h uint64) bool {
	i, _ := bits.Mul64(h<<6, uint64(len(slots)))
	for {
		switch slots[i] {
		case 0:
			slots[i] = v
			return true
		case v:
			return false
		}
		if i++; i == uint64(len(slots)) {
			i = 0
		}
	}
}

func (sh *hashShard) grow() {
	size := len(sh.slots) * 3 / 2
	if size < 1024 {
		size = 1024
	}
	slots := make([]uint64, size)
	for _, v := range sh.slots {
		if v != 0 {
			insert(slots, v, mix(v))
		}
	}
	sh.slots = slots
}

// sum adds f of every shard, each read under its lock.
func sum[S any](shards []S, lock func(*S) *sync.Mutex, f func(*S) int64) int64 {
	var n int64
	for i := range shards {
		mu := lock(&shards[i])
		mu.Lock()
		n += f(&shards[i])
		mu.Unlock()
	}
	return n
}

func hashLock(sh *hashShard) *sync.Mutex { return &sh.mu }

func (s *hashSet) Len() int64 {
	return sum(s.shard[:], hashLock, func(sh *hashShard) int64 { return sh.n })
}

func (s *hashSet) Bytes() int64 {
	return int64(len(s.shard))*64 + sum(s.shard[:], hashLock, func(sh *hashShard) int64 { return int64(cap(sh.slots)) * 8 })
}

// Pages of a range set.
const (
	pageBits  = 16
	arrayMax  = 4096 // an array page of this many values becomes a bitmap
	pageWords = 1 << pageBits / 64
)

type rangeSet struct {
	shard [shards]rangeShard
}

type rangeShard struct {
	mu    sync.Mutex
	pages map[uint64]*page
	n     int64
	bytes int64
}

// page holds the values of one 65,536-value page: a sorted array of
// offsets, or (bitmap != nil) a bitmap.
type page struct {
	array  []uint16
	bitmap *[pageWords]uint64
}

func (s *rangeSet) Add(v uint64) bool {
	key := v >> pageBits
	sh := &s.shard[mix(key)>>(64-6)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.pages == nil {
		sh.pages = map[uint64]*page{}
	}
	p := sh.pages[key]
	if p == nil {
		p = &page{}
		sh.pages[key] = p
		sh.bytes += pageOverhead
	}
	off := uint16(v)
	if p.bitmap != nil {
		w, bit := &p.bitmap[off/64], uint64(1)<<(off%64)
		if *w&bit != 0 {
			return false
		}
		*w |= bit
		sh.n++
		return true
	}
	i, found := slices.BinarySearch(p.array, off)
	if found {
		return false
	}
	sh.n++
	if len(p.array) < arrayMax {
		before := cap(p.array)
		p.array = slices.Insert(p.array, i, off)
		sh.bytes += int64(cap(p.array)-before) * 2
		return true
	}
	p.bitmap = new([pageWords]uint64)
	for _, o := range p.array {
		p.bitmap[o/64] |= 1 << (o % 64)
	}
	p.bitmap[off/64] |= 1 << (off % 64)
	sh.bytes += pageWords*8 - int64(cap(p.array))*2
	p.array = nil
	return true
}

// pageOverhead is about what a page costs besides its values: the map
// entry, the page struct and the slice header.
const pageOverhead = 80

func rangeLock(sh *rangeShard) *sync.Mutex { return &sh.mu }

func (s *rangeSet) Len() int64 {
	return sum(s.shard[:], rangeLock, func(sh *rangeShard) int64 { return sh.n })
}

func (s *rangeSet) Bytes() int64 {
	return sum(s.shard[:], rangeLock, func(sh *rangeShard) int64 { return sh.bytes })
}

// stringKey is the hash key of serials, random per process and fixed
// within it, so equal strings always hash alike.
var stringKey = maphash.MakeSeed()

// stringHash hashes a serial for a hash set.
func stringHash(s string) uint64 { return maphash.String(stringKey, s) }
