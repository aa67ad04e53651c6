#!/usr/bin/env bash
# Measures what one idforge node costs in CPU and memory, for the
# Kubernetes resource requests (deploy/helm/idforge/values.yaml, README
# "Deploying"): the release binary (as the Dockerfile builds it), idle,
# then under idforge-bench's closed-loop load on each ID endpoint. For
# each it prints requests/s, the server's CPU-seconds per 10,000 requests
# (utime+stime from /proc, so the load generator's share is not counted)
# and its resident memory (VmRSS now, VmHWM peak).
#
# Usage: scripts/measure-resources.sh [-s STORE_URL] [-d DURATION] [-c CONNECTIONS]
#   STORE_URL defaults to SQLite in a temporary data directory; for MariaDB
#   e.g. mysql://root@127.0.0.1:3306/idforge_bench (the database must exist).
set -euo pipefail
cd "$(dirname "$0")/.."
store="" dur=10s conns=8 key="res$$"
. scripts/serve-node.sh
measure_node "$@"


c0=$(node_cpu)
sleep 10
c1=$(node_cpu)
echo "store: ${store:-sqlite (embedded)}; $conns connections; $dur per URL"
echo "idle 10 s: $(echo "$c1 - $c0" | bc) CPU-s; $(node_mem)"
for url in "/api/segment/get/$key" "/api/snowflake/get/${key}sf" "/v1/ids/$key?count=100"; do
	before=$(node_cpu)
	out=$("$tmp/idforge-bench" -c "$conns" -d "$dur" -warmup 0s "http://$addr$url" | tail -1)
	after=$(node_cpu)
	rps=$(echo "$out" | awk '{print $1}' | tr -d ,)
	secs=${dur%s}
	per=$(echo "scale=3; ($after - $before) * 10000 / ($rps * $secs)" | bc)
	echo "$url: $rps req/s; $(echo "scale=2; ($after - $before) / $secs" | bc) CPU; $per CPU-s per 10,000 requests; $(node_mem)"
done
