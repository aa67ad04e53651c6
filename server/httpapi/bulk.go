package httpapi

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
)

// readForm reads the form parameter of GET /v1/ids/{key}: "" or "ids"
// for one string per ID, httpwire.FormRanges for ranges. Ranges are
// integers, so they take no format.
func readForm(c v1Call, format string) (ranges bool, err error) {
	form, err := queryValue(c.q, "form")
	if err != nil {
		return false, err
	}
	switch form {
	case "", "ids":
		return false, nil
	case httpwire.FormRanges:
		if format != "" {
			return false, fmt.Errorf("%w: form=ranges answers integers; format applies to form=ids", idforge.ErrInvalidArgument)
		}
		return true, nil
	}
	return false, fmt.Errorf("%w: form %q (want ids or ranges)", idforge.ErrInvalidArgument, form)
}

// rangeBufs recycles the ranges of answers: a segment key's batch is one
// or two, so a request allocates next to nothing for them.
var rangeBufs = sync.Pool{New: func() any { s := make([]idforge.Segment, 0, 4); return &s }}

// idRanges answers GET /v1/ids/{key}?form=ranges: n IDs as ranges (see
// issuer.NextRanges and httpwire.Ranges).
func (h *handler) idRanges(c v1Call, key string, n int) (any, error) {
	buf := rangeBufs.Get().(*[]idforge.Segment)
	defer rangeBufs.Put(buf)
	segs, err := h.iss.NextRanges(c.ctx, key, n, (*buf)[:0])
	*buf = segs[:0]
	if err != nil {
		return nil, err
	}
	out := httpwire.Ranges{Key: key, Ranges: make([]httpwire.IDRange, len(segs))}
	for k, s := range segs {
		out.Ranges[k] = httpwire.IDRange{Start: strconv.FormatInt(s.Start, 10), Count: s.Len()}
	}
	return out, nil
}
