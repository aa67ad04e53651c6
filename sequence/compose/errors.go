package compose

import "errors"

// ErrOutOfRange is returned by Expanded when the inner source returns a
// value below 1 or one that does not fit once shifted left by the memory
// bits (v > math.MaxInt64 >> m). Such errors also wrap
// idforge.ErrSpaceExhausted: a counter past the range (or one that
// wrapped around into negative values) does not come back.
var ErrOutOfRange = errors.New("compose: inner value out of range")
