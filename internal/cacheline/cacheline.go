// Package cacheline owns the padding that gives a hot field a cache line
// of its own: a field that every call writes (an allocator's counter, the
// snowflake sequence word) shares its line with nothing another path
// writes, nor with whatever object the heap places beside its struct, so
// that no core reloads the line for a write it did not need to see
// (false sharing). Layout tests check the padding with testsvc.Apart.
package cacheline

// Size is the cache line the padding assumes: 64 bytes on the x86-64 and
// arm64 processors idforge runs on.
const Size = 64
