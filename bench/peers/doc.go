// Package peers benchmarks idforge's generators side by side with other Go
// ID generators in one run. It is a separate module so that the peers
// never become dependencies of idforge itself:
//
//	cd bench/peers && go test -bench . -benchtime 3s
package peers
