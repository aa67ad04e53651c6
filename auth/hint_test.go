package auth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge/internal/httperr"
)

// TestNoTokenHintPerTransport: a request without a token is told how to
// send one over the transport it used. gRPC has no Authorization header
// of its own and no query string: its answer names the metadata key, and
// never the HTTP ways.
func TestNoTokenHintPerTransport(t *testing.T) {
	a, _ := newTestAuth(t)

	conn := newGRPC(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, method := range []string{"Next", "Stream"} {
		var err error
		if method == "Stream" {
			_, err = callStream(ctx, conn, "", "order")
		} else {
			_, err = callUnary(ctx, conn, method, "", "order")
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.Unauthenticated || !strings.Contains(st.Message(), `metadata "authorization: Bearer <token>"`) ||
			strings.Contains(st.Message(), "?token=") || strings.Contains(st.Message(), "header") {
			t.Errorf("gRPC %s without a token: %v; want Unauthenticated naming the authorization metadata only", method, err)
		}
	}
	// A wrong token is not told how to send one: it did.
	if _, err := callUnary(ctx, conn, "Next", unknownTok, "order"); strings.Contains(status.Convert(err).Message(), "send") {
		t.Errorf("gRPC with a wrong token: %v", err)
	}

	srv := httptest.NewServer(a.Middleware(echo, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/ids/order")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb httperr.Body
	if err := json.Unmarshal(raw, &eb); err != nil || resp.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(eb.Error.Message, `"Authorization: Bearer <token>" (or ?token=<token>)`) || strings.Contains(eb.Error.Message, "metadata") {
		t.Errorf("HTTP without a token: %d %s; want 401 naming the Authorization header and ?token=", resp.StatusCode, raw)
	}
}
