// Package cacheline owns the padding that gives a hot field a cache line
// of its own: a field that every call writes (an allocator's counter, the
// snowflake sequence word) shares its line with nothing another path
// writes, nor with whatever object the heap places beside its struct, so
// that no core reloads the line for a write it did not need to see
// (false sharing). Layout tests check the padding with Apart.
package cacheline

// Size is the cache line the padding assumes: 64 bytes on the x86-64 and
// arm64 processors idforge runs on.
const Size = 64

// Reporter is the part of testing.TB that Apart uses, so that this
// package does not bring the testing package into the binaries.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// Apart reports an error unless the field named field, at offset off in
// its struct, has at least Size bytes before it, and the field named
// next, at offset nextOff, starts at least Size bytes after it.
func Apart(r Reporter, field string, off uintptr, next string, nextOff uintptr) {
	r.Helper()
	if off < Size || nextOff < off+Size {
		r.Errorf("%s at offset %d, %s at %d: %s needs %d bytes of padding before it and %d from it to %s",
			field, off, next, nextOff, field, Size, Size, next)
	}
}
