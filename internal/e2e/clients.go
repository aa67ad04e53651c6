package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// client is shared by every request of the kit. Keep-alive connections to
// a killed node fail fast, which is what the tests want.
var client = &http.Client{Timeout: 10 * time.Second}

// Get fetches url and returns the status and body.
func Get(ctx context.Context, url string) (int, string, error) {
	return Do(ctx, http.MethodGet, url, "")
}

// Do sends a request with an optional JSON body and returns the status and
// body.
func Do(ctx context.Context, method, url, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// FetchIDFromBody parses a plain-text ID answer.
func FetchIDFromBody(body string) (int64, error) {
	return strconv.ParseInt(strings.TrimSpace(body), 10, 64)
}

// FetchID gets a plain-text ID from a Leaf-style endpoint.
func FetchID(ctx context.Context, url string) (int64, error) {
	status, body, err := Get(ctx, url)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d %s", url, status, body)
	}
	return strconv.ParseInt(strings.TrimSpace(body), 10, 64)
}

// FetchIDs gets IDs from GET /v1/ids/{key}?count=N.
func FetchIDs(ctx context.Context, url string) ([]int64, error) {
	status, body, err := Get(ctx, url)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, status, body)
	}
	var resp struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return nil, fmt.Errorf("GET %s: %v in %q", url, err, body)
	}
	ids := make([]int64, len(resp.IDs))
	for i, s := range resp.IDs {
		if ids[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, fmt.Errorf("GET %s: ID %q: %v", url, s, err)
		}
	}
	return ids, nil
}

// Ledger records every ID clients received, in the order each client
// received them. It is safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	byClient map[int][]int64
	errors   int
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{byClient: map[int][]int64{}} }

// Add records ids received by client.
func (l *Ledger) Add(client int, ids ...int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byClient[client] = append(l.byClient[client], ids...)
}

// Failed counts a failed request (expected while a node is down).
func (l *Ledger) Failed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors++
}

// Counts returns the number of IDs recorded and of failed requests.
func (l *Ledger) Counts() (ids, failures int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.byClient {
		ids += len(v)
	}
	return ids, l.errors
}

// All returns every recorded ID, sorted.
func (l *Ledger) All() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []int64
	for _, v := range l.byClient {
		all = append(all, v...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// Max returns the largest recorded ID, 0 when none.
func (l *Ledger) Max() int64 {
	all := l.All()
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1]
}

// CheckUnique returns an error naming the first ID recorded twice.
func (l *Ledger) CheckUnique() error {
	all := l.All()
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return fmt.Errorf("ID %d was issued more than once (%d IDs checked)", all[i], len(all))
		}
	}
	return nil
}

// CheckIncreasing returns an error if some client received an ID not
// greater than the one before it.
func (l *Ledger) CheckIncreasing() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c, ids := range l.byClient {
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				return fmt.Errorf("client %d received %d after %d", c, ids[i], ids[i-1])
			}
		}
	}
	return nil
}

// Drive runs clients goroutines, each calling fetch in a loop until ctx
// ends, and records what they get in l. Failed calls are counted, and the
// client backs off briefly, as a real client would while a node restarts.
func Drive(ctx context.Context, l *Ledger, clients int, fetch func(ctx context.Context, client int) ([]int64, error)) {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				ids, err := fetch(ctx, c)
				if err != nil {
					if ctx.Err() == nil {
						l.Failed()
						time.Sleep(5 * time.Millisecond)
					}
					continue
				}
				l.Add(c, ids...)
			}
		})
	}
	wg.Wait()
}
