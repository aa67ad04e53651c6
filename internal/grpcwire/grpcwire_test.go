package grpcwire

import (
	"encoding/json"
	"testing"

	"github.com/idforge/idforge/api"

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

// The OpenAPI document's Strategy enum names the same strategies as the
// gRPC enum: the HTTP and gRPC APIs show one set.
func TestOpenAPIStrategiesMatch(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				Strategy struct {
					Enum []string `json:"enum"`
				} `json:"Strategy"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	inDoc := map[string]bool{}
	for _, s := range doc.Components.Schemas.Strategy.Enum {
		inDoc[s] = true
	}
	var inProto []string
	for n := range idforgev1.Strategy_name {
		if s, ok := FromStrategy(idforgev1.Strategy(n)); ok {
			inProto = append(inProto, string(s))
			if !inDoc[string(s)] {
				t.Errorf("strategy %q of the gRPC enum is missing from openapi.json's Strategy", s)
			}
		}
	}
	if len(inProto) != len(inDoc) {
		t.Errorf("openapi.json's Strategy lists %v, the gRPC enum %v", doc.Components.Schemas.Strategy.Enum, inProto)
	}
}
