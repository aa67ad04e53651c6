package registry_test

import (
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/registry"
	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/all"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/all"
	"github.com/idforge/idforge/worker"
	_ "github.com/idforge/idforge/worker/all"
)

// Every registered scheme carries a one-line form that starts with the
// scheme and a short description: help texts are made of them.
func TestEveryFormNamesItsScheme(t *testing.T) {
	for what, schemes := range map[string][]registry.Scheme{
		"store": store.Schemes(), "worker": worker.Schemes(),
		"sequence source": sequence.Schemes(), "counter store": sequence.CounterSchemes(),
	} {
		if len(schemes) == 0 {
			t.Errorf("%s: no schemes", what)
		}
		for _, s := range schemes {
			if !strings.HasPrefix(s.Form, s.Name+":") || strings.Contains(s.Form, "\n") || s.Doc == "" {
				t.Errorf("%s scheme %q: form %q, doc %q", what, s.Name, s.Form, s.Doc)
			}
		}
	}
}
