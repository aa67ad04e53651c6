package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/idforge/idforge"
)

// httpStatus is the one table that turns idforge's error codes (see
// idforge.ErrorCode) into HTTP statuses; a code it lacks is a 500.
var httpStatus = map[string]int{
	"invalid_key":           http.StatusBadRequest,
	"invalid_count":         http.StatusBadRequest,
	"invalid_argument":      http.StatusBadRequest,
	"wrong_strategy":        http.StatusBadRequest,
	"invalid_layout":        http.StatusBadRequest,
	"invalid_worker":        http.StatusBadRequest,
	"unknown_key":           http.StatusNotFound,
	"key_exists":            http.StatusConflict,
	"rejected":              http.StatusForbidden,
	"clock_moved_backwards": http.StatusServiceUnavailable,
	"lease_lost":            http.StatusServiceUnavailable,
	"layout_expired":        http.StatusServiceUnavailable,
	"workers_exhausted":     http.StatusServiceUnavailable,
	"unavailable":           http.StatusServiceUnavailable,
	"shutting_down":         http.StatusServiceUnavailable,
	"locked":                http.StatusServiceUnavailable,
	"timeout":               http.StatusServiceUnavailable,
	"canceled":              http.StatusServiceUnavailable,
}

// ErrorBody is the JSON shape of every error answer:
// {"error":{"code":"…","message":"…"}}. Other HTTP packages of idforge
// (compatibility endpoints, authentication) answer with it too.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
	// LeafErrorMsg mirrors Leaf's decodeSnowflakeId failure field so that
	// clients written against Leaf find the message where they look.
	LeafErrorMsg string `json:"errorMsg,omitempty"`
}

// ErrorDetail is the code and message of an ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewErrorBody returns the body for an error code and message.
func NewErrorBody(code, message string) ErrorBody {
	return ErrorBody{Error: ErrorDetail{Code: code, Message: message}}
}

// StatusOf returns the HTTP status and error code for err; anything the
// table lacks (space_exhausted, internal) is a 500.
func StatusOf(err error) (int, string) {
	code := idforge.ErrorCode(err)
	if status, ok := httpStatus[code]; ok {
		return status, code
	}
	return http.StatusInternalServerError, code
}

func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := StatusOf(err)
	if status >= 500 {
		h.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	body := NewErrorBody(code, err.Error())
	if r.URL.Path == "/decodeSnowflakeId" {
		body.LeafErrorMsg = err.Error()
	}
	WriteJSON(w, status, body)
}

// WriteJSON answers with v as JSON and the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
