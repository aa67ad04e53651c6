package snowflake

import (
	"testing"
	"unsafe"

	"github.com/idforge/idforge/internal/testsvc"
)

// The counter every call adds to has a cache line that nothing else
// writes, and the open tick every call loads shares its line with no
// field the lock guards (see internal/cacheline). This checks the
// padding stays in place when fields are added or moved.
func TestHotFieldsOwnTheirCacheLines(t *testing.T) {
	var g Generator
	testsvc.Apart(t, "Generator.seq", unsafe.Offsetof(g.seq), "Generator.open", unsafe.Offsetof(g.open))
	testsvc.Apart(t, "Generator.open", unsafe.Offsetof(g.open), "Generator.mu", unsafe.Offsetof(g.mu))
}
