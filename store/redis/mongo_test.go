package redis_test

import (
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	_ "github.com/idforge/idforge/store/mongo"
	"github.com/idforge/idforge/store/storetest"
)

// TestConformanceMongo runs the suite with MongoDB as the durable store,
// as the Redis-and-MongoDB segment design has it: the store parameter is
// a mongodb:// URL, opened by its scheme through store.Open.
func TestConformanceMongo(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store { return openURL(t, storeURL(t, testsvc.Mongo(t))) }, gappy)
}
