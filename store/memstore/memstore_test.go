package memstore_test

import (
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
	"github.com/idforge/idforge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store { return memstore.New() })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store { return memstore.New() })
}
