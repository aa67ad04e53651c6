package segment

import (
	"testing"
	"unsafe"
)

// The counter every call adds to, and the pointer every call loads, each
// have a cache line that nothing else writes: a field written on another
// path (or by another object the heap places beside them) on the same
// line would make every core reload it (false sharing). This checks the
// padding stays in place when fields are added or moved.
func TestHotFieldsOwnTheirCacheLines(t *testing.T) {
	const line = 64
	var b buffer
	if off := unsafe.Offsetof(b.next); off < line || unsafe.Offsetof(b.start) < off+line {
		t.Errorf("buffer.next at offset %d, buffer.start at %d: the counter needs %d bytes of padding on each side",
			off, unsafe.Offsetof(b.start), line)
	}
	var a Allocator
	// Every field from cur up to mu is fixed after New; mu and what
	// follows are written on the slow path.
	if off := unsafe.Offsetof(a.cur); off < line || unsafe.Offsetof(a.mu) < off+line {
		t.Errorf("Allocator.cur at offset %d, Allocator.mu at %d: cur needs %d bytes before it and read-only fields after it",
			off, unsafe.Offsetof(a.mu), line)
	}
}
