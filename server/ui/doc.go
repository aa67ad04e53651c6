// Package ui serves idforge's admin page: one self-contained HTML page
// (inline CSS and JavaScript, no external assets, so it works offline and
// behind air gaps) that shows what a node is doing, refreshed every 2 s.
//
// The page reads the node's own API, relative to where it is mounted (at
// /ui it calls the paths in Paths: /v1/keys, /readyz, /metrics, /v1/node
// and /v1/serials):
//
//   - every key with its strategy, the current segment and the next value,
//     the pending (prefetched) segment, the step (the newest claim's and
//     the stored one), the consumption rate (idforge_segment_rate), the
//     IDs buffered and how long they last at that rate (/readyz), claims
//     and failing claims, and the key's last error and when;
//   - the sequence sources that report their health (sequence.Status):
//     health, members with their state and rescue time left, calls,
//     failures, highest ticket, prefetch buffer, last error and when;
//   - the serial definitions;
//   - the node: version, store (password redacted), plugins, counters;
//   - the snowflake generator: worker and datacenter IDs, layout, expiry
//     (and any other field /v1/keys reports for it, such as a lease);
//   - the node's readiness from /readyz: ready, degraded or unavailable.
//
// The first paint already shows all of it: Handler asks the API for
// those paths as the page request would (with its credentials) and
// embeds the answers in the page, which renders them before the browser
// paints, then polls.
//
// When the API needs a token (package auth), open the page as
// /ui?token=… once (the token is kept in the tab's sessionStorage and
// removed from the address bar) or type it into the form the page shows
// after a 401. The page sends it as "Authorization: Bearer".
//
// The page is served with a Content-Security-Policy that allows only its
// own inline script and style (by hash) and requests to its own origin.
package ui
