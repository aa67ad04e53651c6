package httpwire

// FormRanges is the value of the form parameter of GET /v1/ids/{key} that
// asks for the IDs as ranges of consecutive IDs (Ranges) rather than one
// string each (IDs, form=ids, the default).
const FormRanges = "ranges"

// Ranges is the answer of GET /v1/ids/{key}?form=ranges: the IDs issued,
// in issue order, as runs of consecutive integers. A segment key's batch
// is one range, or a few when it spans segments; other keys fold
// consecutive IDs together. Start is a decimal string, as IDs are, so that
// JavaScript clients lose no precision; Count is at most the count asked.
type Ranges struct {
	Key    string    `json:"key"`
	Ranges []IDRange `json:"ranges"`
}

// IDRange is Count consecutive IDs from Start.
type IDRange struct {
	Start string `json:"start"`
	Count int64  `json:"count"`
}
