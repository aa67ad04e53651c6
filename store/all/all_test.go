package all_test

import (
	"slices"
	"testing"

	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/all"
)

func TestRegistersBackends(t *testing.T) {
	for _, scheme := range []string{"mongodb", "mongodb+srv", "mysql", "postgres", "postgresql", "sqlite"} {
		if !slices.Contains(store.Names(), scheme) {
			t.Errorf("scheme %q not registered; store.Names() = %q", scheme, store.Names())
		}
	}
}
