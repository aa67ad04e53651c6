package store

import "github.com/idforge/idforge"

// Backend is what every persistent store idforge ships implements,
// beyond the idforge.Store a node needs: the hand-back of unused ranges,
// schema creation for `idforge migrate`, and the serial and operator
// definitions that reach every node sharing the store. Each backend
// asserts it once, so that a capability added here is a compile error in
// every backend that lacks it.
type Backend interface {
	idforge.Store
	idforge.SegmentReturner
	idforge.Migrator
	idforge.SerialStore
	idforge.DefinitionStore
	idforge.KeyUpdater
}
