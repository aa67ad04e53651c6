// Package peers benchmarks idforge's generators side by side with other Go
// ID generators in one run (cd bench/peers && go test -bench .). It is a
// module of its own so that the peers never become idforge's
// dependencies. Its scripts (uncapped.sh, http.sh, cost.sh and all.sh,
// every measure at once) run the benchmarks in interleaved rounds and
// report medians and ratios; BENCHMARKS.md gives each command and figure.
package peers
