#!/usr/bin/env bash
# http.sh loads idforge's HTTP hot path and a trivial net/http counter
# (./trivial) side by side with wrk, interleaved, ROUNDS times (default 3),
# and prints per endpoint the median rate, its ratio to the trivial
# server's rate in the same rounds, and the median p50 and p99 latency.
#
#	bench/peers/http.sh                          # idforge on SQLite
#	STORE='mysql://root@127.0.0.1:3306/idforge_bench' bench/peers/http.sh
#
# Endpoints: the trivial counter (with idforge serve's read, write and
# idle timeouts, as net/http keeps them); Leaf's
# GET /api/segment/get/{key}, GET /v1/ids/{key} and
# GET /v1/ids/{key}?count=10000&form=ranges (also shown in IDs/s). Each
# round starts one endpoint later than the one before. Beside
# the rate, the server's CPU time per request (user + system, from
# /proc/PID/stat over each wrk run) and its ratio to the trivial
# server's: CPU time is what wrk's rate on a shared machine mostly
# stands for, and moves less with the other load. bench/peers/cost.sh
# counts instructions per request, which the load cannot move at all.
# WRK (default "-t1 -c32 -d8s") is passed to wrk. BASE=path/to/idforge
# adds a second idforge binary (e.g. built from an older commit) as
# leaf-base, v1ids-base and ranges-base, on its own data directory (and
# the same STORE), in the same rounds. The machine's other load
# moves every figure; only the ratio to the floor measured in the same
# rounds means much.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${ROUNDS:-3}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
read -r -a wrkargs <<<"${WRK:--t1 -c32 -d8s}"
. ./lib.sh
ip=$(port)
tp=$(port)
"$tmp/idforge" keys create --data "$tmp/data" "${store[@]}" --step 1000000 bench >/dev/null 2>&1 || true
IDFORGE_LOG_LEVEL=warn "$tmp/idforge" serve --data "$tmp/data" "${store[@]}" --http "127.0.0.1:$ip" 2>"$tmp/idforge.log" &
pids+=($!)
ipid=$!
"$tmp/trivial" "127.0.0.1:$tp" &
pids+=($!)
tpid=$!
bp=
if [[ -n ${BASE:-} ]]; then
	bp=$(port)
	"$BASE" keys create --data "$tmp/base" "${store[@]}" --step 1000000 bench >/dev/null 2>&1 || true
	IDFORGE_LOG_LEVEL=warn "$BASE" serve --data "$tmp/base" "${store[@]}" --http "127.0.0.1:$bp" 2>"$tmp/base.log" &
	pids+=($!)
	bpid=$!
fi
# cpu PID: the process's user + system CPU time so far, in clock ticks.
cpu() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)
for u in "http://127.0.0.1:$ip/readyz" "http://127.0.0.1:$tp/"${bp:+"http://127.0.0.1:$bp/readyz"}; do
	for _ in $(seq 100); do curl -fs "$u" >/dev/null && break; sleep 0.1; done
done

ranges='v1/ids/bench?count=10000&form=ranges'
targets=("trivial $tpid http://127.0.0.1:$tp/"
	"leaf $ipid http://127.0.0.1:$ip/api/segment/get/bench"
	"v1ids $ipid http://127.0.0.1:$ip/v1/ids/bench"
	"ranges $ipid http://127.0.0.1:$ip/$ranges")
if [[ -n $bp ]]; then
	targets+=("leaf-base $bpid http://127.0.0.1:$bp/api/segment/get/bench" "v1ids-base $bpid http://127.0.0.1:$bp/v1/ids/bench"
		"ranges-base $bpid http://127.0.0.1:$bp/$ranges")
fi
# Warm up: the first claim, the JIT of nothing, the connections.
for t in "${targets[@]}"; do wrk -t1 -c4 -d1s "${t##* }" >/dev/null; done
out="$tmp/results"
for ((r = 1; r <= rounds; r++)); do
	# Each round starts one target later, so that no endpoint always
	# follows the same one.
	for ((j = 0; j < ${#targets[@]}; j++)); do
		t=${targets[$(((j + r - 1) % ${#targets[@]}))]}
		read -r name pid url <<<"$t"
		c0=$(cpu "$pid")
		wrk "${wrkargs[@]}" --latency "$url" >"$tmp/wrk"
		c1=$(cpu "$pid")
		awk -v name="$name" -v round="$r" -v ticks="$((c1 - c0))" -v hz="$tick" '
			function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
			/requests in/ { n = $1 }
			/Requests\/sec/ { rate = $2 }
			$1 == "50%" { p50 = ms($2) }
			$1 == "99%" { p99 = ms($2) }
			/Non-2xx/ { bad = $NF }
			END { printf "%s %d %s %s %s %s %s\n", name, round, rate, p50, p99, bad + 0, ticks * 1e6 / hz / n }' "$tmp/wrk" >>"$out"
	done
done
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
NR == FNR { if ($1 == "trivial") { floor[$2] = $3; cfloor[$2] = $7 }; next }
{ if (!($1 in rate)) order[++k] = $1; rate[$1] = rate[$1] " " $3; p50[$1] = p50[$1] " " $4; p99[$1] = p99[$1] " " $5; bad[$1] += $6
  cpu[$1] = cpu[$1] " " $7
  ratio[$1] = ratio[$1] " " ($3 / floor[$2]); cratio[$1] = cratio[$1] " " ($7 / cfloor[$2]) }
END {
	printf "%-17s %11s %9s %10s %9s %8s %8s %7s\n", "endpoint", "req/s", "x/trivial", "cpu us/req", "cpu x/tr", "p50 ms", "p99 ms", "non-2xx"
	for (i = 1; i <= k; i++) { e = order[i]
		printf "%-17s %11.0f %9.2f %10.2f %9.2f %8.3f %8.3f %7d\n", e, median(rate[e]), median(ratio[e]), median(cpu[e]), median(cratio[e]), median(p50[e]), median(p99[e]), bad[e]
		if (e ~ /^ranges/) printf "%-17s %11.1f M IDs/s (10,000 a request)\n", "", median(rate[e]) * 10000 / 1e6 }
}' "$out" "$out"
echo "($rounds interleaved rounds of wrk ${wrkargs[*]}; x/trivial and cpu x/tr are the medians of each round's ratio;"
echo " load average before the run: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg))"
