#!/usr/bin/env bash
# Refreshes cmd/idforge/default.pgo, the CPU profile the Go toolchain uses
# for profile-guided optimization: `go build` and `go run` of a main
# package read its default.pgo on their own (-pgo=auto), and inline and
# devirtualize the calls the profile shows hot (a request's way through
# net/http, the metrics wrapper, the router, the issuer and the
# generators' Next) beyond the compiler's usual budget.
#
# It builds idforge as the Dockerfile does, plus the pprof build tag
# (cmd/idforge/pprof.go), serves it on a temporary data directory (SQLite
# unless -s STORE_URL) with HTTP and gRPC, and records a CPU profile
# while idforge-bench loads, all at once, what the node serves most:
# Leaf's GET /api/segment/get/{key}, GET /v1/ids/{key} for a segment and
# a snowflake key, the ranges form of a bulk request and gRPC Stream.
#
# Usage: scripts/pgo.sh [-s STORE_URL] [-d DURATION] [-c CONNECTIONS]
#   defaults: SQLite, 30s, 8 connections per load.
# Run it on a quiet machine after a change to the hot path, and commit
# the new default.pgo with the change (BENCHMARKS.md, "Profile-guided
# optimization").
set -euo pipefail
cd "$(dirname "$0")/.."
store="" dur=30s conns=8 key="pgo$$" serve_grpc=1
. scripts/serve-node.sh
bench_setup "$@"
build_release "$tmp" pprof
IDFORGE_PPROF_ADDR=127.0.0.1:0 serve_node "$tmp/idforge" "$tmp" "$store"
pprof=$(sed -n 's/^pprof=//p' "$tmp/log")
[ -n "$pprof" ] || { cat "$tmp/log"; exit 1; }

secs=${dur%s}
loads=()
for url in "http://$addr/api/segment/get/$key" "http://$addr/v1/ids/$key" "http://$addr/v1/ids/${key}sf" \
	"http://$addr/v1/ids/$key?count=10000&form=ranges" "grpc://$grpc_addr/$key?batch=10000"; do
	"$tmp/idforge-bench" -c "$conns" -d "$((secs + 5))s" -warmup 1s "$url" >"$tmp/bench.$((${#loads[@]}))" &
	loads+=($!)
done
sleep 3 # every load past its warm-up
curl -sf -o "$tmp/cpu.pgo" "http://$pprof/debug/pprof/profile?seconds=$secs"
wait "${loads[@]}"
cat "$tmp"/bench.*
mv "$tmp/cpu.pgo" cmd/idforge/default.pgo
echo "wrote cmd/idforge/default.pgo ($(wc -c <cmd/idforge/default.pgo) bytes; ${secs}s of CPU profile, load average $(cut -d' ' -f1-3 /proc/loadavg))"
