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
# sends a fixed message (ids/s; waits on the store after the cold start);
# httpapi: GET /v1/ids/{key}?count=10000, form=ids and form=ranges,
# against a trivial handler (ids/s).
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-bench-bulk}
mkdir -p "$out"
out=$(cd "$out" && pwd)
go test -c -o "$out/segment.test" ./segment/
go test -c -o "$out/grpcapi.test" ./server/grpcapi/
go test -c -o "$out/httpapi.test" ./server/httpapi/
for i in $(seq "${ROUNDS:-5}"); do
	echo "round $i" >&2
	(cd segment && "$out/segment.test" -test.run '^$' -test.bench 'AtomicAdd$|Next$|NextInto|NextNBatch|AppendRanges' -test.benchmem) >>"$out/segment.txt"
	(cd server/grpcapi && "$out/grpcapi.test" -test.run '^$' -test.bench 'StreamFloor|StreamSQLite' -test.benchtime "${GRPC_MSGS:-5000}x") >>"$out/grpc.txt"
	(cd server/httpapi && "$out/httpapi.test" -test.run '^$' -test.bench 'BulkHTTP' -test.benchtime 1s) >>"$out/http.txt"
done
echo "results in $out: segment.txt grpc.txt http.txt" >&2
