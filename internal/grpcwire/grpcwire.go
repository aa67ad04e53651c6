// Package grpcwire is the one owner of what the gRPC API's messages mean
// to both sides, beside the errors of internal/grpcerr: the key
// strategies of its Strategy enum, as server/grpcapi writes and reads
// them and the Go client reads them.
package grpcwire

import (
	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// strategies pairs the API's enum values with idforge's strategies.
var strategies = map[idforgev1.Strategy]idforge.Strategy{
	idforgev1.Strategy_STRATEGY_SEGMENT:   idforge.StrategySegment,
	idforgev1.Strategy_STRATEGY_SNOWFLAKE: idforge.StrategySnowflake,
	idforgev1.Strategy_STRATEGY_UUIDV7:    idforge.StrategyUUIDv7,
	idforgev1.Strategy_STRATEGY_ULID:      idforge.StrategyULID,
	idforgev1.Strategy_STRATEGY_SOURCE:    idforge.StrategySource,
	idforgev1.Strategy_STRATEGY_UUIDV4:    idforge.StrategyUUIDv4,
}

// ToStrategy returns the enum value of s; STRATEGY_UNSPECIFIED for a
// strategy the API does not name.
func ToStrategy(s idforge.Strategy) idforgev1.Strategy {
	for api, key := range strategies {
		if key == s {
			return api
		}
	}
	return idforgev1.Strategy_STRATEGY_UNSPECIFIED
}

// FromStrategy returns the strategy s names; ok is false for
// STRATEGY_UNSPECIFIED and for a value this build does not know.
func FromStrategy(s idforgev1.Strategy) (strategy idforge.Strategy, ok bool) {
	strategy, ok = strategies[s]
	return strategy, ok
}
