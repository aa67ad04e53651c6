# Sourced by the measuring scripts (bench-http.sh, measure-resources.sh,
# measure-bulk.sh).
#
#   bench_setup "$@"
# reads their options -s STORE_URL, -d DURATION, -c CONNECTIONS into store,
# dur and conns (the caller sets the defaults first), makes the temporary
# directory tmp and removes it, and kills $pid, on exit.
bench_setup() {
	local opt OPTIND
	while getopts "s:d:c:" opt; do
		case $opt in
		s) store=$OPTARG ;;
		d) dur=$OPTARG ;;
		c) conns=$OPTARG ;;
		*) exit 2 ;;
		esac
	done
	tmp=$(mktemp -d)
	pid=""
	trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
}

#   serve_node BINARY DIR [STORE_URL]
# starts `BINARY serve` on a free loopback port with its data directory in
# DIR (after `migrate` when STORE_URL is given), waits until it serves,
# and creates a segment key $key and a snowflake key ${key}sf. It sets pid
# and addr; the caller's EXIT trap kills $pid. With serve_grpc=1 set, the
# node serves gRPC on a free loopback port as well, whose address it sets
# in grpc_addr.
serve_node() {
	local bin=$1 dir=$2 store=${3:-}
	local args=(--data "$dir/data" --http 127.0.0.1:0 --log-level info)
	[ "${serve_grpc:-}" = 1 ] && args+=(--grpc 127.0.0.1:0)
	if [ -n "$store" ]; then
		args+=(--store "$store")
		"$bin" migrate --store "$store" --data "$dir/data" >/dev/null
	fi
	"$bin" serve "${args[@]}" 2>"$dir/log" &
	pid=$!
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's/.*msg="idforge serving" http=\([^ ]*\).*/\1/p' "$dir/log")
		[ -n "$addr" ] && break
		sleep 0.1
	done
	[ -n "$addr" ] || { cat "$dir/log"; exit 1; }
	grpc_addr=$(sed -n 's/.*msg="idforge serving" .*grpc=\([^ ]*\).*/\1/p' "$dir/log")
	curl -sf -XPOST "http://$addr/v1/keys" -d "{\"key\":\"$key\",\"step\":1000}" >/dev/null
	curl -sf -XPOST "http://$addr/v1/keys" -d "{\"key\":\"${key}sf\",\"strategy\":\"snowflake\"}" >/dev/null
}

#   measure_node "$@"
# is what a measuring script starts with, after setting its defaults and
# $key: bench_setup, build_release into $tmp, serve_node on $store.
measure_node() {
	bench_setup "$@"
	build_release "$tmp"
	serve_node "$tmp/idforge" "$tmp" "$store"
}

#   build_release DIR [TAG]
# builds the release binary (as the Dockerfile builds it, plus build tag
# TAG when given) and idforge-bench into DIR.
build_release() {
	CGO_ENABLED=0 go build -tags "grpcnotrace${2:+ $2}" -trimpath -ldflags "-s -w" -o "$1/idforge" ./cmd/idforge
	go build -o "$1/idforge-bench" ./cmd/idforge-bench
}

#   node_cpu, node_mem
# print the CPU-seconds process $pid has used (utime+stime from /proc) and
# its resident memory (VmRSS now, VmHWM peak).
node_cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14+$15)/t}' "/proc/$pid/stat"; }
node_mem() { awk '/^VmRSS|^VmHWM/ {printf "%s %.1f MiB  ", $1, $2/1024}' "/proc/$pid/status"; }
