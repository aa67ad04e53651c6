#!/usr/bin/env bash
# uncapped.sh measures every in-memory figure of BENCHMARKS.md in one run:
# the Uncapped benchmarks (snowflake Next beside its peers, segment Next,
# the floor: a bare atomic add; one goroutine and both cores) and the Batch
# benchmarks (NextInto of 100 and 10,000 IDs into a reused slice). It runs
# them ROUNDS times (default 5), one round after the other, so that every
# benchmark is measured under the same load in each round, and prints
# medians over the rounds of ns/op and cpu-ns/op (the process's CPU time,
# which the machine's load moves far less than wall time) and of ratios
# taken within each round:
#
#   - bwmarrin/x: how many times cheaper than bwmarrin/snowflake (CPU);
#   - x/floor: CPU per call over the floor's; floor/x is the share of the
#     floor's throughput (the segment allocator's aim is at least 0.9);
#     iface/x the share of floor-iface's, the same add reached through
#     idforge.Generator's Next as every generator is;
#   - Next/batch: the generator's Next over its batch's CPU per ID (the
#     aim is at least 10).
#
#	bench/peers/uncapped.sh                  # this module's go test
#	bench/peers/uncapped.sh a.test b.test    # test binaries (go test -c), interleaved
#
# BENCHTIME (default 1s) is passed to -benchtime, BENCH (default
# 'Uncapped|Batch') to -bench. The load average is printed before and after.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${ROUNDS:-5}
args=(-test.run '^$' -test.bench "${BENCH:-Uncapped|Batch}" -test.benchtime "${BENCHTIME:-1s}" -test.count 1)
out=$(mktemp)
trap 'rm -f "$out" "$out.bin"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if (($# == 0)); then
	go test -c -o "$out.bin" . >/dev/null
	set -- "$out.bin"
	name() { echo this; }
else
	name() { basename "$1"; }
fi
for ((r = 1; r <= rounds; r++)); do
	for bin in "$@"; do
		"$bin" "${args[@]}" | sed "s|^|$(name "$bin") $r |" >>"$out"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return 0
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
# Lines read: binary round BenchmarkX/gen[/n]-P iterations value unit ...
$3 ~ /^Benchmark(Uncapped|Batch)/ {
	n = split($3, p, "/"); sub(/-[0-9]+$/, "", p[n])
	key = $1 " " p[1] " " p[2] (n > 2 ? "/" p[3] : "")
	if (!(key in seen)) { seen[key] = 1; order[++k] = key }
	rounds[$2] = 1
	for (i = 5; i <= NF; i++) {
		if ($(i) == "ns/op") ns[key, $2] = $(i-1)
		if ($(i) == "cpu-ns/op" || $(i) == "cpu-ns/id") cpu[key, $2] = $(i-1)
	}
}
# med(key, ratio-to): median over the rounds of cpu[key]/cpu[to] (or of
# cpu[key] when to is empty).
function med(key, to,   r, l) {
	l = ""
	for (r in rounds) if ((key, r) in cpu && (to == "" || ((to, r) in cpu && cpu[to, r] > 0))) l = l " " (to == "" ? cpu[key, r] : cpu[key, r] / cpu[to, r])
	return median(l)
}
function medns(key,   r, l) { l = ""; for (r in rounds) if ((key, r) in ns) l = l " " ns[key, r]; return median(l) }
function inv(x) { return x > 0 ? 1 / x : 0 }
END {
	printf "%-16s %-26s %-14s %9s %9s %10s %8s %8s %8s\n", "binary", "benchmark", "generator", "ns/op", "cpu-ns/op", "bwmarrin/x", "x/floor", "floor/x", "iface/x"
	for (i = 1; i <= k; i++) {
		split(order[i], f, " ")
		if (f[2] != "BenchmarkUncapped" && f[2] != "BenchmarkUncappedParallel") continue
		bw = f[1] " " f[2] " bwmarrin"; fl = f[1] " " f[2] " floor"; fi = f[1] " " f[2] " floor-iface"
		printf "%-16s %-26s %-14s %9.1f %9.2f %10.2f %8.2f %8.2f %8.2f\n", f[1], f[2], f[3], medns(order[i]), med(order[i], ""),
			inv(med(order[i], bw)), med(order[i], fl), inv(med(order[i], fl)), inv(med(order[i], fi))
	}
	printf "\n%-16s %-26s %-9s %11s %13s %11s\n", "binary", "batch (NextInto)", "IDs", "cpu-ns/id", "Next cpu-ns", "Next/batch"
	for (i = 1; i <= k; i++) {
		split(order[i], f, " ")
		if (f[2] != "BenchmarkBatch") continue
		split(f[3], g, "/"); nx = f[1] " BenchmarkUncapped " g[1]
		printf "%-16s %-26s %-9s %11.3f %13.2f %11.1f\n", f[1], g[1], g[2], med(order[i], ""), med(nx, ""), inv(med(order[i], nx))
	}
}' "$out"
