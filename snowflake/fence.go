package snowflake

import "time"

// Fence durably records a time bound for one generator (one worker ID of
// one layout). After a restart the generator never issues an ID whose tick
// starts at or before the recorded time, so a crash followed by a clock
// set back can never reuse time.
//
// A running Generator stores a time FenceAhead beyond the newest tick it
// issues before issuing in it, refreshing the record in the background as
// time passes; Close stores the start of the newest tick actually issued,
// so a clean restart needs no wait. Store is called by one goroutine at a
// time and always with a later time than before, except by Close.
//
// Each worker ID needs its own record: a fence shared by two generators
// would let one overwrite the other's bound.
type Fence interface {
	// Load returns the recorded time, or the zero Time when nothing was
	// recorded yet.
	Load() (time.Time, error)
	// Store records t, replacing the previous record. It must not return
	// before t is on stable storage.
	Store(t time.Time) error
}
