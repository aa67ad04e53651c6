package idforge

import "errors"

// Sentinel errors. Every error idforge returns for one of these conditions
// wraps the matching value, so callers test with errors.Is. Each one has
// its Code (see codes.go), from which transports take status codes.
var (
	// ErrUnknownKey is returned when a key (biz tag) does not exist.
	ErrUnknownKey = errors.New("idforge: unknown key")

	// ErrKeyExists is returned when creating a key whose name is taken.
	ErrKeyExists = errors.New("idforge: key already exists")

	// ErrInvalidKey is returned when a key name is empty, too long or
	// contains characters outside [A-Za-z0-9._:-].
	ErrInvalidKey = errors.New("idforge: invalid key name")

	// ErrInvalidCount is returned when a batch size is below 1 or above
	// the allowed maximum.
	ErrInvalidCount = errors.New("idforge: invalid count")

	// ErrInvalidArgument is returned for any other malformed input: a bad
	// step or start value, a malformed ID, an unparsable request body.
	ErrInvalidArgument = errors.New("idforge: invalid argument")

	// ErrWrongStrategy is returned when a key is asked for IDs of a
	// strategy it does not use, e.g. a segment ID from a snowflake key.
	ErrWrongStrategy = errors.New("idforge: key uses another strategy")

	// ErrInvalidLayout is returned when a snowflake layout is malformed:
	// bits not summing to 63, an unknown unit, an epoch in the future.
	ErrInvalidLayout = errors.New("idforge: invalid snowflake layout")

	// ErrInvalidWorker is returned when a worker or datacenter ID does not
	// fit the bits the layout gives it.
	ErrInvalidWorker = errors.New("idforge: worker ID out of range")

	// ErrWorkersExhausted is returned when every worker ID the layout
	// allows is held by another node.
	ErrWorkersExhausted = errors.New("idforge: every worker ID of the layout is taken")

	// ErrLeaseLost is returned when this node's worker-ID lease could not
	// be renewed in time: another node may be given the ID, so this node
	// must not issue with it any more.
	ErrLeaseLost = errors.New("idforge: worker ID lease lost")

	// ErrLayoutExpired is returned when the layout's time bits cannot
	// represent the current time any more. Issuing would overflow into the
	// sign bit (uid-generator's default layout did this in 2024).
	ErrLayoutExpired = errors.New("idforge: snowflake layout has run out of time bits")

	// ErrStoreFailedOver is returned when the store that hands out
	// segments or worker IDs is no longer the server the cluster's claims
	// were made on (an asynchronous replica was promoted, a backup
	// restored), or handed a node a range below one it had already
	// claimed: what it holds may be older than what was issued, so
	// claiming from it could issue a value twice. Nothing is claimed
	// until an operator has run `idforge keys repair`.
	ErrStoreFailedOver = errors.New("idforge: store failed over")

	// ErrClockMovedBackwards is returned when the clock is behind the last
	// issued (or persisted) time by more than the configured tolerance.
	ErrClockMovedBackwards = errors.New("idforge: clock moved backwards")

	// ErrUnavailable is returned when no buffered IDs remain and the store
	// cannot supply more right now. It wraps the store's own error.
	ErrUnavailable = errors.New("idforge: no IDs buffered and the store is unavailable")

	// ErrRejected is wrapped by the error a caller gets when a plugin
	// refused the call before any ID was drawn (see package plugin).
	ErrRejected = errors.New("idforge: rejected by a plugin")

	// ErrUnsafeChange is returned when a definition differs from the
	// fingerprint recorded at its first use in a way that can make values
	// repeat (a balanced composition's members or order, an expansion's
	// bits, a key's format or its secret, the snowflake layout): the node
	// refuses to start, or the change is refused. The message says what
	// changed and what a safe migration is.
	ErrUnsafeChange = errors.New("idforge: unsafe change")

	// ErrRetired is returned for a key or definition an operator retired:
	// it issues nothing, and its name cannot be defined again.
	ErrRetired = errors.New("idforge: retired")

	// ErrSpaceExhausted is returned when a key cannot issue more IDs:
	// the next segment would pass the largest int64, or an ID no longer
	// fits the key's format or a serial's width. Retrying cannot help.
	ErrSpaceExhausted = errors.New("idforge: key has exhausted its ID space")

	// ErrLocked is returned when a data directory is already in use by
	// another process.
	ErrLocked = errors.New("idforge: data directory is locked by another process")

	// ErrClosed is returned by a generator or store after Close.
	ErrClosed = errors.New("idforge: closed")

	// ErrUnauthenticated is returned when a call needs a token and
	// presents none, or one that is not configured (see package auth).
	ErrUnauthenticated = errors.New("idforge: unauthenticated")

	// ErrForbidden is returned when the presented token is valid but its
	// role or its keys do not allow the call.
	ErrForbidden = errors.New("idforge: forbidden")

	// ErrRateLimited is returned when the presented token has used up its
	// rate.
	ErrRateLimited = errors.New("idforge: rate limited")

	// ErrNoEndpoint is returned when a request names no endpoint of the
	// server: a wrong path, or a call the server's version does not have.
	ErrNoEndpoint = errors.New("idforge: no such endpoint")

	// ErrUnknownReservation is returned when a gap-free serial has no
	// reservation of the ID given.
	ErrUnknownReservation = errors.New("idforge: unknown reservation")

	// ErrAlreadyCommitted is returned when committing or voiding a
	// reservation that was committed.
	ErrAlreadyCommitted = errors.New("idforge: reservation already committed")

	// ErrReservationExpired is returned when committing or voiding a
	// reservation after its expiry: its number was voided, or handed to
	// another reservation.
	ErrReservationExpired = errors.New("idforge: reservation expired")

	// ErrReservationVoided is returned when committing or voiding a
	// reservation that was voided.
	ErrReservationVoided = errors.New("idforge: reservation voided")

	// ErrMethodNotAllowed is returned when an endpoint does not take the
	// request's HTTP method.
	ErrMethodNotAllowed = errors.New("idforge: method not allowed")
)
