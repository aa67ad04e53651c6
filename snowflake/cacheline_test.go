package snowflake

import (
	"testing"
	"unsafe"
)

// The counter every call adds to has a cache line that nothing else
// writes, and the open tick every call loads shares its line with no
// field the lock guards: a field written on another path (or by another
// object the heap places beside them) on the same line would make every
// core reload it on its next call (false sharing). This checks the
// padding stays in place when fields are added or moved.
func TestHotFieldsOwnTheirCacheLines(t *testing.T) {
	const line = 64
	var g Generator
	if off := unsafe.Offsetof(g.seq); off < line || unsafe.Offsetof(g.open) < off+line {
		t.Errorf("Generator.seq at offset %d, Generator.open at %d: the counter needs %d bytes of padding on each side",
			off, unsafe.Offsetof(g.open), line)
	}
	if off := unsafe.Offsetof(g.open); unsafe.Offsetof(g.mu) < off+line {
		t.Errorf("Generator.open at offset %d, Generator.mu at %d: the fields the lock guards belong on later lines",
			off, unsafe.Offsetof(g.mu))
	}
}
