// Package peers benchmarks idforge's generators side by side with other Go
// ID generators in one run. It is a separate module so that the peers
// never become dependencies of idforge itself:
//
//	cd bench/peers && go test -bench . -benchtime 3s
//
// The uncapped benchmarks (every generator with 22 bits of sequence, so no
// call waits for the clock, and idforge's segment allocator) and the
// batch benchmarks (NextInto into a reused slice) are meant to be run in
// interleaved rounds, with medians of CPU time per call and of ratios to
// bwmarrin/snowflake, to a bare atomic add and of Next to its batch form:
// every in-memory figure of BENCHMARKS.md in one run.
//
//	bench/peers/uncapped.sh
//
// http.sh does the same for HTTP: wrk against idforge's Leaf endpoint and
// /v1/ids beside a trivial net/http counter (./trivial) on the same
// machine, interleaved, with medians and the ratio to the trivial server:
//
//	bench/peers/http.sh
//
// cost.sh counts, under valgrind's callgrind, the instructions the same
// servers spend per request (./reqs sends a fixed number), a measure the
// machine's other load cannot move:
//
//	bench/peers/cost.sh
//
// all.sh runs every performance measure of BENCHMARKS.md in one go: the
// in-memory figures, HTTP, bulk (scripts/bench-bulk.sh) and a node's
// memory idle, under bulk load and with many keys:
//
//	bench/peers/all.sh
package peers
