#!/usr/bin/env bash
# Measures the HTTP server side by side: a trivial endpoint (/healthz)
# against the ID endpoints, in one run, with idforge-bench (closed loop,
# p50/p99/p99.9) and, when installed, wrk (Debian package "wrk").
#
# Usage: scripts/bench-http.sh [-s STORE_URL] [-d DURATION] [-c CONNECTIONS]
#   STORE_URL defaults to SQLite in a temporary data directory; for MariaDB
#   e.g. mysql://root@127.0.0.1:3306/idforge_bench (the database must exist;
#   the script runs idforge migrate).
set -euo pipefail
cd "$(dirname "$0")/.."
store="" dur=10s conns=32
. scripts/serve-node.sh
bench_setup "$@"

go build -o "$tmp/idforge" ./cmd/idforge
go build -o "$tmp/idforge-bench" ./cmd/idforge-bench
key="bench$$"
serve_node "$tmp/idforge" "$tmp" "$store"

echo "store: ${store:-sqlite (embedded)}; $conns connections; $dur per URL"
"$tmp/idforge-bench" -c "$conns" -d "$dur" \
	"http://$addr/healthz" \
	"http://$addr/api/segment/get/$key" \
	"http://$addr/api/snowflake/get/${key}sf" \
	"http://$addr/v1/ids/$key?count=100"
echo "segment claims during the run:"
curl -sf "http://$addr/metrics" | grep -E "^idforge_segment_(loads_total|waits_total|claim_duration_seconds_(sum|count))\{key=\"$key\"\}" || true
if command -v wrk >/dev/null; then
	for path in /healthz "/api/segment/get/$key"; do
		echo "== wrk $path"
		wrk -t2 -c"$conns" -d"$dur" --latency "http://$addr$path" | grep -E 'Requests/sec|  50%|  99%'
	done
fi
