// Package ui serves idforge's admin page: one self-contained HTML page
// (inline CSS and JavaScript, no external assets, so it works offline and
// behind air gaps) that shows what a node is doing, refreshed every 2 s.
//
// The page reads the node's own API, relative to where it is mounted
// (at /ui it calls /v1/keys, /readyz and /metrics):
//
//   - every key with its strategy, the current segment and the next value,
//     the pending (prefetched) segment, the step (the newest claim's and
//     the stored one), the consumption rate (idforge_segment_rate), the
//     IDs buffered and how long they last at that rate (/readyz), claims
//     and failing claims with the last error;
//   - the snowflake generator: worker and datacenter IDs, layout, expiry
//     (and any other field /v1/keys reports for it, such as a lease);
//   - the store's state from /readyz: ready, degraded or unavailable.
//
// When the API needs a token (package auth), open the page as
// /ui?token=… once (the token is kept in the tab's sessionStorage and
// removed from the address bar) or type it into the form the page shows
// after a 401. The page sends it as "Authorization: Bearer".
//
// The page is served with a Content-Security-Policy that allows only its
// own inline script and style (by hash) and requests to its own origin.
package ui
