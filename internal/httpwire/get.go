package httpwire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Answer is what Get says about the answer besides its body: its header,
// and when the request was sent and answered, for clock comparisons.
type Answer struct {
	Header         http.Header
	Sent, Received time.Time
}

// Get asks the node at base (an http(s) URL) for path, with token as a
// bearer token when set, within 5 seconds, and decodes a 200 answer into
// out. Any other status is an error quoting the body.
func Get(ctx context.Context, base, path, token string, out any) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var a Answer
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return a, err
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	a.Sent = time.Now()
	resp, err := http.DefaultClient.Do(req)
	a.Received = time.Now()
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	a.Header = resp.Header
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return a, err
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return a, fmt.Errorf("GET %s: %s: %s", base+path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return a, fmt.Errorf("GET %s: %w", base+path, err)
	}
	return a, nil
}

// AllKeys reads every page of GET /v1/keys from the node at base: the
// first page's answer with the keys of every page. The Answer is the
// first page's.
func AllKeys(ctx context.Context, base, token string) (Keys, Answer, error) {
	var k Keys
	a, err := Get(ctx, base, "/v1/keys", token, &k)
	for err == nil && k.Next != "" {
		var more Keys
		_, err = Get(ctx, base, "/v1/keys?after="+url.QueryEscape(k.Next), token, &more)
		k.Keys, k.Next = append(k.Keys, more.Keys...), more.Next
	}
	return k, a, err
}
