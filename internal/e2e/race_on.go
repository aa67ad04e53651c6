//go:build race

package e2e

// raceEnabled is true when the tests run with -race; the binary under test
// is then built with -race too, so races in the server fail the run.
const raceEnabled = true
