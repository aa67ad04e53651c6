// Package ui serves idforge's admin page: one self-contained HTML page
// (inline CSS and JavaScript, no external assets) that shows what a node
// is doing, refreshed every 2 s: its keys and their segments, the sources
// that report their health, the serials, the node, the snowflake
// generator and the node's readiness.
//
// The page reads the node's own API relative to where it is mounted (the
// paths in Paths). Handler asks the API for those paths as the page
// request would, with its credentials, and embeds the answers, so the
// first paint already shows them. When the API needs a token, open the
// page as /ui?token=… once (kept in the tab's sessionStorage and removed
// from the address bar) or type it into the form shown after a 401; the
// page sends it as "Authorization: Bearer". The page is served with a
// Content-Security-Policy that allows only its own inline script and
// style (by hash) and requests to its own origin.
package ui
