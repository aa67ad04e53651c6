#!/usr/bin/env bash
# all.sh runs every performance measure of BENCHMARKS.md in one go, each
# side by side with its floor or its peers in interleaved rounds, and
# keeps each script's output in OUT (default ./bench-all):
#
#   1. in memory (uncapped.sh): snowflake Next beside bwmarrin, sonyflake
#      and yitter; segment Next beside a bare atomic add, one goroutine
#      and both cores; NextInto batches against Next; then segment Next
#      in segment's own benchmarks, plain and inlined by PGO
#      (scripts/bench-next.sh);
#   2. HTTP (http.sh): Leaf's endpoint, /v1/ids and the ranges answer
#      beside a trivial net/http server, rate, latency and CPU time per
#      request (STORE picks the store, as for http.sh);
#   3. bulk (scripts/bench-bulk.sh): gRPC Stream in both forms on SQLite,
#      HTTP bulk, the Go client's Stream, with waits after the cold start;
#   4. memory (scripts/measure-bulk.sh, scripts/measure-keys.sh): a node
#      idle and under bulk load, and at 1,000 and 10,000 keys (KEYS).
#
#	bench/peers/all.sh
#	ROUNDS=3 STORE='mysql://root@127.0.0.1:3306/idforge_bench' bench/peers/all.sh
#
# ROUNDS (default 5) goes to every script. It takes 15–25 minutes; the
# figures mean most on an otherwise quiet machine, and the ratios to the
# floors measured in the same rounds are what carries over.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-bench-all}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export ROUNDS=${ROUNDS:-5}
step() { # name, command...
	local name=$1
	shift
	echo "== $name (load average $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$out/$name.txt"
	"$@" 2>&1 | tee -a "$out/$name.txt"
}
step memory "$here/uncapped.sh"
step segment-next "$root/scripts/bench-next.sh"
step http "$here/http.sh"
step bulk env OUT="$out/bulk" "$root/scripts/bench-bulk.sh"
step node-memory "$root/scripts/measure-bulk.sh"
# shellcheck disable=SC2086 # KEYS is a list of sizes
step keys "$root/scripts/measure-keys.sh" ${KEYS:-1000 10000}
echo "all figures in $out"
