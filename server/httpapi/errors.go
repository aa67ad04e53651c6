package httpapi

import (
	"net/http"

	"github.com/idforge/idforge/internal/httperr"
)

// leafErrorBody is the error answer of /decodeSnowflakeId: idforge's body
// plus Leaf's errorMsg field, where clients written against Leaf's
// decodeSnowflakeId look for the message.
type leafErrorBody struct {
	httperr.Body
	LeafErrorMsg string `json:"errorMsg"`
}

// writeError answers err with the status of its code (see idforge.Code)
// and idforge's JSON error body.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := httperr.Of(h.log, r, err)
	if r.URL.Path == "/decodeSnowflakeId" {
		WriteJSON(w, status, leafErrorBody{Body: body, LeafErrorMsg: err.Error()})
		return
	}
	WriteJSON(w, status, body)
}

// WriteJSON answers with v as JSON and the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) { httperr.WriteJSON(w, status, v) }
