package grpcwire

import (
	"testing"

	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// Every value of the enum but STRATEGY_UNSPECIFIED names a strategy and
// comes back from it: a value added to the proto without its strategy
// fails here, not in a client that reads a key.
func TestEveryStrategyRoundTrips(t *testing.T) {
	for n, name := range idforgev1.Strategy_name {
		api := idforgev1.Strategy(n)
		s, ok := FromStrategy(api)
		if api == idforgev1.Strategy_STRATEGY_UNSPECIFIED {
			if ok {
				t.Errorf("%s names strategy %q; want none", name, s)
			}
			continue
		}
		if !ok || ToStrategy(s) != api {
			t.Errorf("%s: strategy %q (ok %v), back to %s", name, s, ok, ToStrategy(s))
		}
	}
	if got := ToStrategy("no-such"); got != idforgev1.Strategy_STRATEGY_UNSPECIFIED {
		t.Errorf("ToStrategy(no-such) = %s; want STRATEGY_UNSPECIFIED", got)
	}
}
