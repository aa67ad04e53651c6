#!/usr/bin/env bash
# Measures one idforge node's memory under bulk load (BENCHMARKS.md,
# "Bulk"): the release binary (as the Dockerfile builds it) on SQLite with
# HTTP and gRPC, idle, then under each bulk load in turn: 8 gRPC Streams
# of batches of 10,000 (the Go client's Stream: ranges, expanded in the
# client) and 8 connections of GET /v1/ids/{key}?count=10000&form=ranges
# (idforge-bench). For each it prints IDs/s, the server's CPU use
# (utime+stime from /proc: the load generator's share is not counted;
# warm-up included), the IDs the node issued (the key's issued count,
# lost ones included),
# its resident memory now (VmRSS) and its peak during that load (VmHWM,
# reset before each load through /proc/PID/clear_refs).
#
# Usage: scripts/measure-bulk.sh [-s STORE_URL] [-d DURATION] [-c CONNECTIONS]
#   defaults: SQLite in a temporary data directory, 10s, 8.
set -euo pipefail
cd "$(dirname "$0")/.."
store="" dur=10s conns=8 key="bulk$$" serve_grpc=1
. scripts/serve-node.sh
measure_node "$@"

issued() { curl -sf "http://$addr/v1/keys/$key" | sed -n 's/.*"issued":\([0-9]*\).*/\1/p' | grep . || echo 0; }
resetPeak() { echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || echo "(VmHWM not reset: it is the peak since start)"; }

c0=$(node_cpu)
sleep 10
c1=$(node_cpu)
echo "store: ${store:-sqlite (embedded)}; $conns streams or connections; $dur each; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "idle 10 s: $(echo "$c1 - $c0" | bc) CPU-s; $(node_mem)"
for url in "grpc://$grpc_addr/$key?batch=10000" "http://$addr/v1/ids/$key?count=10000&form=ranges"; do
	resetPeak
	before=$(node_cpu) issued0=$(issued)
	out=$("$tmp/idforge-bench" -c "$conns" -d "$dur" -warmup 1s "$url" | tail -1)
	after=$(node_cpu) issued1=$(issued)
	batches=$(echo "$out" | awk '{print $1}' | tr -d ,)
	errors=$(echo "$out" | awk '{print $6}')
	secs=${dur%s}
	echo "${url%%://*} $(echo "$url" | sed 's/.*\/\(v1\/ids\/\)\{0,1\}[^/?]*?/?/'): $(echo "$batches * 10000 / 1000000" | bc) M IDs/s ($batches batches/s, $errors errors; the node issued $(echo "($issued1 - $issued0) / ($secs + 1) / 1000000" | bc) M/s); $(echo "scale=2; ($after - $before) / ($secs + 1)" | bc) CPU; $(node_mem)"
	echo "idle after: $(sleep 2; node_mem)"
done
