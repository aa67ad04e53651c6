// Package httperr is idforge's HTTP error answer, shared by every HTTP
// package (server/httpapi, server/compat, server/ui, and the auth
// middleware in front of them): the status of the error's code from the
// one vocabulary (see idforge.Code) and the JSON body
// {"error":{"code":"…","message":"…"}}.
package httperr

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/strictjson"
)

// Body is the JSON shape of every error answer.
type Body struct {
	Error Detail `json:"error"`
}

// Detail is the code and message of a Body.
type Detail struct {
	Code    idforge.Code `json:"code"`
	Message string       `json:"message"`
}

// Of returns the status and body that answer err, and logs the failures
// that are the server's: internal (err carries no code: a bug) at error
// level, any other 5xx (the node cannot serve right now) at warn level,
// each with the request's method and path. log nil means slog.Default().
func Of(log *slog.Logger, r *http.Request, err error) (int, Body) {
	code := idforge.ErrorCode(err)
	status := code.HTTPStatus()
	if status >= 500 {
		if log == nil {
			log = slog.Default()
		}
		level := slog.LevelWarn
		if code == idforge.CodeInternal {
			level = slog.LevelError
		}
		log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "status", status, "code", string(code), "err", err)
	}
	return status, Body{Error: Detail{Code: code, Message: err.Error()}}
}

// Write answers err with Of's status and body.
func Write(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, body := Of(log, r, err)
	WriteJSON(w, status, body)
}

// JSONHeaders sets the headers of a JSON answer: its Content-Type and
// nosniff. The values are shared by every answer rather than allocated
// for each (net/http only reads them).
func JSONHeaders(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["X-Content-Type-Options"] = nosniff
}

var (
	jsonType = []string{"application/json"}
	nosniff  = []string{"nosniff"}
)

// JSONAppender is a value that writes its own JSON, byte for byte what
// strictjson's Encoder writes for it (the hot answers of internal/httpwire).
type JSONAppender interface {
	AppendJSON([]byte) []byte
}

// jsonBufs recycles the buffers JSONAppenders write into.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// WriteJSON answers with v as JSON and the given status, written by
// strictjson (a URL's & stays &).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	JSONHeaders(w)
	w.WriteHeader(status)
	if a, ok := v.(JSONAppender); ok {
		buf := jsonBufs.Get().(*[]byte)
		b := a.AppendJSON((*buf)[:0])
		w.Write(b)
		if cap(b) <= 64<<10 { // a rare huge answer is not kept
			*buf = b[:0]
			jsonBufs.Put(buf)
		}
		return
	}
	strictjson.NewEncoder(w).Encode(v)
}
