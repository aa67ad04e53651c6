package obfuscate

import "errors"

// ErrNoKey is returned by Format's methods when the format has a feistel
// stage but its Permute is nil or of another width, or when Permute is set
// on a format without a feistel stage. It is a configuration error, not a
// bad request, so it deliberately wraps no idforge sentinel (transports
// report it as an internal error); Format.Validate finds it at start-up.
var ErrNoKey = errors.New("obfuscate: format's feistel stage has no matching key")
