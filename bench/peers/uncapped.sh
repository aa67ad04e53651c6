#!/usr/bin/env bash
# uncapped.sh runs the Uncapped benchmarks ROUNDS times (default 5), one
# round after the other so that every generator is measured under the same
# load in each round, and prints the median ns/op and cpu-ns/op of each with
# its ratio to bwmarrin/snowflake and to the floor (a bare atomic add).
#
#	bench/peers/uncapped.sh                  # this module's go test
#	bench/peers/uncapped.sh a.test b.test    # test binaries (go test -c), interleaved
#
# BENCHTIME (default 1s) is passed to -benchtime.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${ROUNDS:-5}
args=(-test.run '^$' -test.bench 'Uncapped' -test.benchtime "${BENCHTIME:-1s}" -test.count 1)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
	if (($# == 0)); then
		go test -c -o "$out.bin" . >/dev/null
		"$out.bin" "${args[@]}" | sed 's/^/this /' >>"$out"
		rm -f "$out.bin"
	else
		for bin in "$@"; do
			"$bin" "${args[@]}" | sed "s|^|$(basename "$bin") |" >>"$out"
		done
	fi
done
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
$2 ~ /^BenchmarkUncapped/ {
	split($2, p, "/"); sub(/-[0-9]+$/, "", p[2])
	key = $1 " " p[1] " " p[2]
	if (!(key in ns)) order[++k] = key
	for (i = 3; i <= NF; i++) {
		if ($(i) == "ns/op") ns[key] = ns[key] " " $(i-1)
		if ($(i) == "cpu-ns/op") cpu[key] = cpu[key] " " $(i-1)
	}
}
END {
	for (i = 1; i <= k; i++) { mns[order[i]] = median(ns[order[i]]); mcpu[order[i]] = median(cpu[order[i]]) }
	printf "%-22s %-27s %-14s %9s %9s %10s %10s %9s\n", "binary", "benchmark", "generator", "ns/op", "cpu-ns/op", "bwmarrin/x", "(cpu)", "x/floor"
	for (i = 1; i <= k; i++) {
		split(order[i], f, " "); bw = f[1] " " f[2] " bwmarrin"; fl = f[1] " " f[2] " floor"
		printf "%-22s %-27s %-14s %9.1f %9.1f %10.2f %10.2f %9.1f\n", f[1], f[2], f[3], mns[order[i]], mcpu[order[i]],
			mns[bw] / mns[order[i]], mcpu[bw] / mcpu[order[i]], mcpu[order[i]] / mcpu[fl]
	}
}' "$out"
