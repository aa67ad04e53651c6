#!/bin/sh
# Bulk issuing, measured in interleaved rounds (BENCHMARKS.md, "Bulk"):
# every benchmark runs once per round, so that a change in the machine's
# load hits all of them alike, and each round's figures are read as
# ratios to the floor measured in the same round.
#
#   scripts/bench-bulk.sh            # 5 rounds, results in ./bench-bulk/
#   ROUNDS=3 OUT=/tmp/b scripts/bench-bulk.sh
#
# segment: Next, NextInto, NextN and AppendRangesBelow against a bare
# atomic add (cpu-ns/id: the process's CPU time per ID);
# grpcapi: 8 Streams of batches of 10,000 on SQLite against a server that
# sends a fixed message, in form ids and form ranges (ids/s, cpu-ns/id;
# waits on the store after the cold start);
# httpapi: GET /v1/ids/{key}?count=10000, form=ids and form=ranges,
# against a trivial handler (ids/s);
# client: the Go client's Stream over HTTP and gRPC (ranges, expanded in
# the client) against the expansion alone (ids/s, cpu-ns/id).
# The node's memory under bulk load is scripts/measure-bulk.sh.
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-bench-bulk}
mkdir -p "$out"
out=$(cd "$out" && pwd)
go test -c -o "$out/segment.test" ./segment/
go test -c -o "$out/grpcapi.test" ./server/grpcapi/
go test -c -o "$out/httpapi.test" ./server/httpapi/
go test -c -o "$out/client.test" ./client/
for i in $(seq "${ROUNDS:-5}"); do
	echo "round $i" >&2
	(cd segment && "$out/segment.test" -test.run '^$' -test.bench 'AtomicAdd$|Next$|NextInto|NextNBatch|AppendRanges' -test.benchmem) >>"$out/segment.txt"
	(cd server/grpcapi && "$out/grpcapi.test" -test.run '^$' -test.bench 'StreamFloor/IDs|StreamSQLite/IDs' -test.benchtime "${GRPC_MSGS:-5000}x") >>"$out/grpc.txt"
	(cd server/grpcapi && "$out/grpcapi.test" -test.run '^$' -test.bench 'StreamFloor/Ranges|StreamSQLite/Ranges' -test.benchtime "${RANGES_MSGS:-50000}x") >>"$out/grpc.txt"
	(cd server/httpapi && "$out/httpapi.test" -test.run '^$' -test.bench 'BulkHTTP' -test.benchtime 1s) >>"$out/http.txt"
	(cd client && "$out/client.test" -test.run '^$' -test.bench 'BenchmarkStream$' -test.benchtime 1s) >>"$out/client.txt"
done
echo "results in $out: segment.txt grpc.txt http.txt client.txt" >&2
# Medians over the rounds of every figure a benchmark reports.
for f in segment grpc http client; do
	echo "== $f (median of ${ROUNDS:-5} rounds)"
	awk '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		if (!(name in seen)) { seen[name] = 1; order[++k] = name }
		for (i = 3; i < NF; i += 2) {
			key = name SUBSEP $(i+1)
			if (!(key in vals)) units[name] = units[name] " " $(i+1)
			vals[key] = vals[key] " " $i
		}
	}
	END {
		for (i = 1; i <= k; i++) {
			line = sprintf("%-32s", order[i]); n = split(units[order[i]], u, " ")
			for (j = 1; j <= n; j++) line = line sprintf("  %.4g %s", median(vals[order[i], u[j]]), u[j])
			print line
		}
	}' "$out/$f.txt"
done
