#!/usr/bin/env bash
# measure-keys.sh measures what a node costs as its number of segment keys
# grows: for each N (default "1000 10000 100000") it starts idforge on
# SQLite with N keys in leaf_alloc (inserted directly, as Leaf's operators
# add biz tags), issues one ID of every key through Leaf's endpoint, and
# prints the node's resident memory (idle before, after, and its peak) and
# the size of one answer of /metrics, /readyz, /readyz?verbose=1 and the
# first page of /v1/keys.
#
#	scripts/measure-keys.sh                  # this tree's idforge
#	BIN=path/to/idforge scripts/measure-keys.sh 1000 10000
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
((${#sizes[@]})) || sizes=(1000 10000 100000)
tmp=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${BIN:-}
if [[ -z $bin ]]; then
	bin=$tmp/idforge
	go build -o "$bin" ./cmd/idforge
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
rss() { awk -v f="$2" '$1 == f":" { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
size() { curl -fs "$base$1" | wc -c; }
printf "%8s %9s %9s %9s %12s %10s %12s %12s\n" keys "idle MB" "RSS MB" "peak MB" "/metrics B" "/readyz B" "verbose B" "/v1/keys B"
for n in "${sizes[@]}"; do
	data=$tmp/data-$n
	"$bin" keys create --data "$data" measure >/dev/null
	db=$(find "$data" -name '*.db' | head -1)
	sqlite3 "$db" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
		INSERT INTO leaf_alloc (biz_tag, max_id, step) SELECT 'k' || i, 1, 1000 FROM c;"
	IDFORGE_LOG_LEVEL=warn "$bin" serve --data "$data" --http "127.0.0.1:$port" 2>"$tmp/log-$n" &
	pid=$!
	for _ in $(seq 200); do curl -fs "$base/readyz" >/dev/null && break; sleep 0.1; done
	idle=$(rss "$pid" VmRSS)
	seq -f "$base/api/segment/get/k%.0f" 1 "$n" | xargs -P 4 -n 200 curl -fs >/dev/null
	sleep 1
	after=$(rss "$pid" VmRSS)
	m=$(size /metrics)
	r=$(size /readyz)
	rv=$(size '/readyz?verbose=1')
	k=$(size /v1/keys)
	peak=$(rss "$pid" VmHWM)
	printf "%8d %9s %9s %9s %12d %10d %12d %12d\n" "$n" "$idle" "$after" "$peak" "$m" "$r" "$rv" "$k"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	rm -rf "$data"
done
