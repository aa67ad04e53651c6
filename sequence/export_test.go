package sequence

// CounterNames returns the schemes OpenCounter knows, sorted.
func CounterNames() []string { return counters.Names() }
