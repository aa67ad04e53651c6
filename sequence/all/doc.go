// Package all registers every sequence source and counter store with
// sequence.Open and sequence.OpenCounter. The idforge binary imports it;
// programs that embed idforge import the backends they use instead.
package all
