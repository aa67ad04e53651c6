package segment

import (
	"testing"
	"unsafe"

	"github.com/idforge/idforge/internal/testsvc"
)

// The counter every call adds to, and the pointer every call loads, each
// have a cache line that nothing else writes (see internal/cacheline).
// This checks the padding stays in place when fields are added or moved.
func TestHotFieldsOwnTheirCacheLines(t *testing.T) {
	var b buffer
	testsvc.Apart(t, "buffer.next", unsafe.Offsetof(b.next), "buffer.start", unsafe.Offsetof(b.start))
	var a Allocator
	// Every field from cur up to mu is fixed after New; mu and what
	// follows are written on the slow path.
	testsvc.Apart(t, "Allocator.cur", unsafe.Offsetof(a.cur), "Allocator.mu", unsafe.Offsetof(a.mu))
}
