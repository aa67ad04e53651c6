package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httperr"
	"github.com/idforge/idforge/internal/httpwire"
)

// maxBody bounds the answers read: idforge.MaxCount IDs as JSON strings
// take about 230 kB.
const maxBody = 4 << 20

// NewHTTP returns a Client talking to idforge's HTTP API (GET
// /v1/ids/{key}, /v1/serials/{name}, /v1/explain/{id}, and /v1/keys/{key}
// once per key with WithRangeCache) on the nodes at addrs, in order of
// preference (see the package doc). An address is host:port (http://, or
// https:// with WithTLS) or a URL with a scheme and optionally a path
// prefix ("https://ids.example.com/idforge"). It returns an error wrapping
// idforge.ErrInvalidArgument for an empty or malformed address list or an
// invalid option; it makes no request.
func NewHTTP(addrs []string, opts ...Option) (Client, error) {
	return newRemote(addrs, opts, httpConns)
}

// httpConns returns what opens a node of the HTTP API with options o.
func httpConns(o options) func(addr string) (conn, error) {
	hc, own := o.httpClient, (*http.Transport)(nil)
	if hc == nil {
		own = http.DefaultTransport.(*http.Transport).Clone()
		own.MaxIdleConnsPerHost = 256
		own.MaxIdleConns = 0
		own.TLSClientConfig = o.tls
		hc = &http.Client{Transport: own}
	}
	auth := ""
	if o.token != "" {
		auth = "Bearer " + o.token
	}
	return func(addr string) (conn, error) {
		base, err := baseURL(addr, o.tls != nil)
		if err != nil {
			return nil, err
		}
		return &httpConn{addr: addr, base: base, hc: hc, own: own, auth: auth}, nil
	}
}

// baseURL turns an address into the URL the API paths are appended to.
func baseURL(addr string, useTLS bool) (string, error) {
	if !strings.Contains(addr, "://") {
		scheme := "http://"
		if useTLS {
			scheme = "https://"
		}
		addr = scheme + addr
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: client: server address %q is not host:port or an http(s) URL", idforge.ErrInvalidArgument, addr)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

var _ conn = (*httpConn)(nil)

// httpConn is one node of the HTTP API.
type httpConn struct {
	addr string
	base string
	hc   *http.Client
	own  *http.Transport // the client's own transport; nil with WithHTTPClient
	auth string
}

// get fetches base+path into out, or returns the node's error answer as
// an *Error.
func (h *httpConn) get(ctx context.Context, path string, out any) error {
	return h.send(ctx, http.MethodGet, path, nil, out)
}

// send makes a request of method to base+path with in as its JSON body
// (none when nil) and reads a 200 or 201 answer into out, or returns the
// node's error answer as an *Error.
func (h *httpConn) send(ctx context.Context, method, path string, in, out any) error {
	var reqBody io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("idforge client: %w", err)
		}
		reqBody = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, reqBody)
	if err != nil {
		return fmt.Errorf("idforge client: %s: %w", h.addr, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.auth != "" {
		req.Header.Set("Authorization", h.auth)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return fmt.Errorf("idforge client: %s: %w", h.addr, err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxBody)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return h.errorOf(resp, body)
	}
	if err := json.NewDecoder(body).Decode(out); err != nil {
		return fmt.Errorf("idforge client: %s: reading the answer to %s %s: %w", h.addr, method, path, err)
	}
	io.Copy(io.Discard, body) // so the connection can be reused
	return nil
}

// errorOf reads an error answer: {"error":{"code","message"}} from
// idforge, anything else from whatever stands in between.
func (h *httpConn) errorOf(resp *http.Response, body io.Reader) error {
	raw, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	e := &Error{Server: h.addr, HTTPStatus: resp.StatusCode}
	var answer httperr.Body
	if json.Unmarshal(raw, &answer) == nil && answer.Error.Code != "" {
		e.Code, e.Message = answer.Error.Code, answer.Error.Message
		return e
	}
	e.Message = strings.TrimSpace(string(raw))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	if e.Message == "" {
		e.Message = resp.Status
	}
	return e
}

// idStrings fetches n IDs of key as GET /v1/ids/{key} writes them: in
// format, or the key's own text form when format is "".
func (h *httpConn) idStrings(ctx context.Context, key string, n int, format string) ([]string, error) {
	q := url.Values{}
	if format != "" {
		q.Set("format", format)
	}
	var a httpwire.IDs
	if err := h.get(ctx, withCount("/v1/ids/"+url.PathEscape(key), q, n), &a); err != nil {
		return nil, err
	}
	return counted(h.addr, "IDs", n, a.IDs)
}

// withCount returns path with the query q and, unless n is the API's
// default of 1, count=n.
func withCount(path string, q url.Values, n int) string {
	if n != 1 {
		q.Set("count", strconv.Itoa(n))
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

func (h *httpConn) ids(ctx context.Context, key string, n int) ([]int64, error) {
	// format=decimal: the integers, whatever text form the key shows
	// (for a permuting format, the same permuted integers gRPC returns).
	strs, err := h.idStrings(ctx, key, n, "decimal")
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(strs))
	for i, s := range strs {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("idforge client: %s: ID %q is not a decimal int64", h.addr, s)
		}
		ids[i] = id
	}
	return ids, nil
}

func (h *httpConn) next(ctx context.Context, key string) (int64, error) {
	ids, err := h.ids(ctx, key, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

func (h *httpConn) nextN(ctx context.Context, key string, n int) ([]int64, error) {
	return h.ids(ctx, key, n)
}

func (h *httpConn) nextStrings(ctx context.Context, key string, n int) ([]string, error) {
	return h.idStrings(ctx, key, n, "")
}

func (h *httpConn) nextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	q := make(url.Values, len(params)+1)
	for k, v := range params {
		q.Set(httpwire.SerialParamPrefix+k, v)
	}
	var a httpwire.Serials
	if err := h.get(ctx, withCount("/v1/serials/"+url.PathEscape(name), q, n), &a); err != nil {
		return nil, err
	}
	return counted(h.addr, "serials", n, a.Values)
}

func (h *httpConn) explain(ctx context.Context, id int64) (Explanation, error) {
	var a httpwire.Explain
	if err := h.get(ctx, "/v1/explain/"+strconv.FormatInt(id, 10), &a); err != nil {
		return Explanation{}, err
	}
	return Explanation{ID: id, Parts: a.Parts(), Layout: a.Layout, Expires: a.Expires.UTC()}, nil
}

func (h *httpConn) explainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	var a httpwire.Unpacked
	if err := h.get(ctx, "/v1/explain/"+strconv.FormatInt(id, 10)+"?source="+url.QueryEscape(source), &a); err != nil {
		return idforge.Unpacked{}, err
	}
	return a.Unpacked()
}

func (h *httpConn) key(ctx context.Context, key string) (idforge.Key, error) {
	var a httpwire.Key
	if err := h.get(ctx, "/v1/keys/"+url.PathEscape(key), &a); err != nil {
		return idforge.Key{}, err
	}
	return idforge.Key{Name: key, Strategy: idforge.Strategy(a.Strategy), Order: idforge.Order(a.Order)}, nil
}

func (h *httpConn) close() error {
	if h.own != nil {
		h.own.CloseIdleConnections()
	}
	return nil
}
