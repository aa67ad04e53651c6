# lib.sh is sourced by http.sh and cost.sh from this directory: a
# temporary directory $tmp, removed at exit with the processes listed in
# pids; idforge and the trivial server built into it (both with
# idforge's PGO profile); store, the
# --store flag when STORE is set; and port, a free local port.
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

(cd ../.. && go build -o "$tmp/idforge" ./cmd/idforge)
go build -o "$tmp/trivial" ./trivial
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
store=()
if [[ -n ${STORE:-} ]]; then store=(--store "$STORE"); fi
