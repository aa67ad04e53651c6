#!/usr/bin/env bash
# cost.sh measures what idforge's HTTP hot path costs per request in
# instructions, which the machine's other load cannot move (unlike wrk's
# rates, see http.sh), beside the trivial net/http counter (./trivial).
# Each server runs under valgrind's callgrind; ./reqs sends a fixed
# number of requests over 4 keep-alive connections. The counters are
# zeroed, N requests sent and the counters dumped, then the same with 2N:
# (total(2N) - total(N)) / N is one request's instructions, whatever the
# server spends idle or once. Prints per endpoint the instructions per
# request and the ratio to the trivial server's.
#
# The collector is off (GOGC=off) unless GC=1: a collection is a lump of
# millions of instructions every few thousand requests, which N requests
# catch or miss by chance, so the default counts the request's own path
# exactly, run after run. GC=1 N=20000 keeps each server's own collector
# (idforge's heap floor included) and spreads it over enough requests to
# show its share (about 5 minutes); http.sh's CPU time per request
# includes it too.
#
#	bench/peers/cost.sh
#	STORE='mysql://root@127.0.0.1:3306/idforge_bench' N=4000 bench/peers/cost.sh
#	PROFILE=dir bench/peers/cost.sh   # keeps the callgrind dumps: callgrind_annotate dir/leaf.2
#
# Endpoints: the trivial counter (with idforge serve's HTTP timeouts, as
# net/http keeps them); Leaf's GET /api/segment/get/{key};
# GET /v1/ids/{key}; and GET /v1/ids/{key}?count=10000&form=ranges.
# BASE=path/to/idforge adds an older binary's three endpoints. Needs
# valgrind (apt-get install valgrind); takes about two minutes.
# SKIP_TRIVIAL=1 measures idforge alone (ratios then to its first line).
set -euo pipefail
cd "$(dirname "$0")"
n=${N:-4000}
gogc=off
if [[ -n ${GC:-} ]]; then gogc=; fi
. ./lib.sh
go build -o "$tmp/reqs" ./reqs
out="$tmp/dumps"
mkdir -p "$out"
if [[ -n ${PROFILE:-} ]]; then mkdir -p "$PROFILE"; fi

# callgrind NAME CMD...: starts CMD under callgrind, its dumps numbered
# from $out/NAME.1 on; sets vgpid and vgout.
callgrind() {
	vgout="$out/$1"
	dumps=0
	shift
	# Asynchronous preemption's signals only slow valgrind down; valgrind
	# cannot decode RDTSCP, which the runtime reads the cycle counter with
	# where the CPU has it (cpu.rdtscp=off: the fenced RDTSC instead).
	GOMAXPROCS=1 GOGC=$gogc GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file="$vgout" "$@" 2>"$vgout.log" &
	vgpid=$!
	pids+=($vgpid)
}

# measure NAME URL: the instructions per request of URL at the server
# callgrind started last.
measure() {
	local name=$1 url=$2 k sum=()
	"$tmp/reqs" -n "$((n / 2))" "$url" # warm: buffers, pools, connections' first claims
	for k in 1 2; do
		callgrind_control -z "$vgpid" >/dev/null 2>&1
		"$tmp/reqs" -n "$((n * k))" "$url"
		callgrind_control -d "$vgpid" >/dev/null 2>&1
		dumps=$((dumps + 1))
		for _ in $(seq 100); do [[ -s $vgout.$dumps ]] && break; sleep 0.1; done
		sum+=("$(awk '/^summary:/ { print $2 }' "$vgout.$dumps")")
		if [[ -n ${PROFILE:-} ]]; then cp "$vgout.$dumps" "$PROFILE/$name.$k"; fi
	done
	echo "$name $(((sum[1] - sum[0]) / n))" >>"$tmp/results"
}

wait_up() {
	for _ in $(seq 600); do curl -fs "$1" >/dev/null && return; sleep 0.2; done
	echo "cost.sh: $1 did not come up" >&2
	exit 1
}

if [[ -z ${SKIP_TRIVIAL:-} ]]; then
tp=$(port)
callgrind trivial "$tmp/trivial" "127.0.0.1:$tp"
wait_up "http://127.0.0.1:$tp/"
measure trivial "http://127.0.0.1:$tp/"
kill "$vgpid"
fi

# node NAME BINARY DATA: idforge's three endpoints.
node() {
	local name=$1 bin=$2 data=$3 ip
	"$bin" keys create --data "$data" "${store[@]}" --step 1000000 bench >/dev/null 2>&1 || true
	ip=$(port)
	IDFORGE_LOG_LEVEL=warn callgrind "idforge$name" "$bin" serve --data "$data" "${store[@]}" --http "127.0.0.1:$ip"
	wait_up "http://127.0.0.1:$ip/readyz"
	measure "leaf$name" "http://127.0.0.1:$ip/api/segment/get/bench"
	measure "v1ids$name" "http://127.0.0.1:$ip/v1/ids/bench"
	measure "ranges$name" "http://127.0.0.1:$ip/v1/ids/bench?count=10000&form=ranges"
	kill "$vgpid"
}
node "" "$tmp/idforge" "$tmp/data"
if [[ -n ${BASE:-} ]]; then node -base "$BASE" "$tmp/base"; fi

awk '
$1 == "trivial" { floor = $2 }
NR == 1 && !floor { floor = $2 }
{ name[++k] = $1; ins[k] = $2 }
END {
	printf "%-18s %14s %10s\n", "endpoint", "instr/request", "x trivial"
	for (i = 1; i <= k; i++) printf "%-18s %14d %10.2f\n", name[i], ins[i], ins[i] / floor
}' "$tmp/results"
echo "(callgrind instructions of the server process per request: N=$n and 2N requests over 4 keep-alive connections; GOGC=${gogc:-default})"
