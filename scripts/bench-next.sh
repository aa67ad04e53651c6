#!/usr/bin/env bash
# Measures segment Next against a bare atomic add, the floor of any
# in-memory issuer (BENCHMARKS.md, "In memory"), in two builds of segment's benchmarks, ROUNDS interleaved rounds
# (default 5), and prints the median of each round's ratio:
#
#   plain  Next is a call: it cannot be inlined (the call of its slow path
#          alone is over the inliner's budget), and a call that has a
#          slow path to reach keeps a frame and stores on the stack that
#          a bare add has not. BenchmarkAtomicAddCall is the add behind
#          one call without those.
#   pgo    built with a CPU profile of the Next benchmarks themselves:
#          the compiler inlines Next into the loop.
#
# Usage: ROUNDS=5 scripts/bench-next.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/plain.test" ./segment/
(cd "$tmp" && ./plain.test -test.run '^$' -test.bench '^BenchmarkNext(Parallel)?$' -test.benchtime 2s \
	-test.cpuprofile next.pgo >/dev/null)
go test -c -pgo="$tmp/next.pgo" -o "$tmp/pgo.test" ./segment/

bench='^Benchmark(AtomicAdd|AtomicAddCall|Next)(Parallel)?$'
for r in $(seq "$rounds"); do
	for build in plain pgo; do
		(cd "$tmp" && "./$build.test" -test.run '^$' -test.bench "$bench" -test.benchtime 1s) |
			awk -v r="$r" -v build="$build" '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print r, build, $1, $3 }'
	done
done >"$tmp/results"

# The median of each round's ratio bare add / Next, per build and per
# serial or parallel; and the median ns/op of each benchmark.
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ ns[$1, $2, $3] = $4; names[$2 " " $3] = 1; builds[$2] = 1; rounds[$1] = 1 }
END {
	printf "%-8s %-34s %8s\n", "build", "benchmark", "ns/op"
	n = 0
	for (k in names) {
		split(k, p, " "); list = ""
		for (r in rounds) list = list " " ns[r, p[1], p[2]]
		line[++n] = sprintf("%-8s %-34s %8.3f", p[1], p[2], median(list))
	}
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (line[j] < line[i]) { t = line[i]; line[i] = line[j]; line[j] = t }
	for (i = 1; i <= n; i++) print line[i]
	printf "\n%-8s %-10s %14s %20s\n", "build", "", "Next / add", "Next / call floor"
	for (b in builds) for (s = 0; s < 2; s++) {
		par = s ? "Parallel" : ""
		list = ""; clist = ""
		for (r in rounds) {
			list = list " " ns[r, b, "BenchmarkAtomicAdd" par] / ns[r, b, "BenchmarkNext" par]
			clist = clist " " ns[r, b, "BenchmarkAtomicAddCall" par] / ns[r, b, "BenchmarkNext" par]
		}
		printf "%-8s %-10s %13.2fx %19.2fx\n", b, s ? "parallel" : "serial", median(list), median(clist)
	}
	k = 0
	for (r in rounds) k++
	printf "(%d interleaved rounds; each ratio is the median of the rounds'\''; above 1 Next is the faster)\n", k
}' "$tmp/results"
