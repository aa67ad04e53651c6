#!/usr/bin/env bash
# Measures a segment key in global order beside the same key in node
# order, in one run, over Leaf's HTTP endpoint: three idforge nodes share
# one database; interleaved rounds load one node with 1 and with -c
# connections, then all three nodes at once. Then the pause: how long
# the surviving nodes' answers take while a loaded node is killed
# (SIGKILL), and while one is paused (SIGSTOP) for a second, beside a run
# with no fault.
#
# Usage: scripts/measure-global.sh [-s STORE_URL] [-d DURATION] [-c CONNECTIONS] [-r ROUNDS]
#   STORE_URL defaults to a database of its own on the MariaDB server at
#   127.0.0.1:3306 (dropped at the end); for PostgreSQL give e.g.
#   postgres://postgres@127.0.0.1:5432/DB?sslmode=disable (DB must exist).
set -euo pipefail
cd "$(dirname "$0")/.."
store="" dur=5s conns=32 rounds=3
args=()
while (($#)); do
	case $1 in
	-r) rounds=$2; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
. scripts/serve-node.sh
bench_setup "${args[@]}"
pids=()
db=""
trap 'for p in "${pids[@]}"; do kill -CONT $p 2>/dev/null; kill $p 2>/dev/null; done; wait 2>/dev/null
	[ -n "$db" ] && mysql -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $db"; rm -rf "$tmp"' EXIT
if [ -z "$store" ]; then
	db=idforge_global_$$
	mysql -uroot -h127.0.0.1 -e "CREATE DATABASE $db"
	store="mysql://root@127.0.0.1:3306/$db"
fi
build_release "$tmp"
"$tmp/idforge" migrate --store "$store" --data "$tmp/m" >/dev/null

# start N: starts node N (1-3), setting addrs[N] and pids[N].
addrs=()
start() {
	local n=$1 dir=$tmp/node$1
	mkdir -p "$dir"
	"$tmp/idforge" serve --data "$dir" --http 127.0.0.1:0 --store "$store" --worker "$n" 2>"$dir/log" &
	pids[$n]=$!
	for _ in $(seq 100); do
		addrs[$n]=$(sed -n 's/.*msg="idforge serving" http=\([^ ]*\).*/\1/p' "$dir/log")
		[ -n "${addrs[$n]}" ] && return
		sleep 0.1
	done
	cat "$dir/log"
	exit 1
}
for n in 1 2 3; do start $n; done
curl -sf -XPOST "http://${addrs[1]}/v1/keys" -d '{"key":"node","step":1000}' >/dev/null
curl -sf -XPOST "http://${addrs[1]}/v1/keys" -d '{"key":"global","step":1000,"order":"global"}' >/dev/null
bench() { "$tmp/idforge-bench" -d "$dur" "$@" | tail -n +2; }

echo "store: $store; $dur per measure; $rounds rounds"
echo "req/s p50 p99 p99.9 max errors URL"
for r in $(seq "$rounds"); do
	echo "== round $r: one node, 1 connection, then $conns"
	for c in 1 "$conns"; do
		bench -c "$c" "http://${addrs[1]}/api/segment/get/node" "http://${addrs[1]}/api/segment/get/global"
	done
	for key in node global; do
		echo "== round $r: three nodes at once, $conns connections each, key $key"
		bs=()
		for n in 1 2 3; do
			bench -c "$conns" "http://${addrs[$n]}/api/segment/get/$key" >"$tmp/three$n" &
			bs+=($!)
		done
		wait "${bs[@]}"
		cat "$tmp"/three[123]
		awk '{s += $1} END {printf "   sum %.0f req/s\n", s}' "$tmp"/three[123]
	done
done

# fault NAME ACTION: loads all three nodes with the global key for $dur,
# ACTION runs against node 1 two seconds in, and prints what nodes 2 and
# 3 answered meanwhile (their max is the pause they saw).
fault() {
	echo "== global key, all three nodes loaded, $1 node 1 two seconds in: nodes 2 and 3"
	"$tmp/idforge-bench" -c 8 -d "$dur" -warmup 0s "http://${addrs[1]}/api/segment/get/global" >/dev/null 2>&1 &
	local b1=$!
	local bs=()
	for n in 2 3; do
		bench -c 8 -warmup 0s "http://${addrs[$n]}/api/segment/get/global" >"$tmp/f$n" &
		bs+=($!)
	done
	sleep 2
	$2
	wait "${bs[@]}"
	cat "$tmp"/f[23]
	wait "$b1" 2>/dev/null || true
}
for r in $(seq "$rounds"); do
	fault "nothing done to" true
	fault "SIGSTOP for 1 s of" "eval kill -STOP ${pids[1]}; sleep 1; kill -CONT ${pids[1]}"
	fault "SIGKILL of" "eval kill -KILL ${pids[1]}"
	wait "${pids[1]}" 2>/dev/null || true
	start 1
done
