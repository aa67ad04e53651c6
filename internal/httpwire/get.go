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

// Get asks the node at base (an http(s) URL) for path, with token as a
// bearer token when set, within 5 seconds, and decodes a 200 answer into
// out. Any other status is an error quoting the body.
func Get(ctx context.Context, base, path, token string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Errorf("GET %s: %s: %s", base+path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w", base+path, err)
	}
	return nil
}

// AllKeys reads every page of GET /v1/keys from the node at base: the
// first page's answer with the keys of every page.
func AllKeys(ctx context.Context, base, token string) (Keys, error) {
	var k Keys
	err := Get(ctx, base, "/v1/keys", token, &k)
	for err == nil && k.Next != "" {
		var more Keys
		err = Get(ctx, base, "/v1/keys?after="+url.QueryEscape(k.Next), token, &more)
		k.Keys, k.Next = append(k.Keys, more.Keys...), more.Next
	}
	return k, err
}
