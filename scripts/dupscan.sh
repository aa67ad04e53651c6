#!/usr/bin/env bash
# Scans the non-test code of idforge for code written twice: the pairs of
# places that share six or more lines (the same lines, or lines of the same
# shape with other names), with the `duplicates` tool of the tool library.
# Left out, as the scan of issue 13 leaves them out: *_test.go files,
# generated *.pb.go files and the test harness packages (storetest,
# workertest, seqtest, sqltest, internal/e2e, internal/testsvc,
# internal/testca, internal/fakeclock). The files are copied into a temp
# dir with their paths, so the tool reads only them.
#
# Usage: scripts/dupscan.sh [duplicates options]   (default: --most 200 --seconds 120)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files '*.go' | grep -v '_test\.go$' | grep -v '\.pb\.go$' |
	grep -vE '(storetest|workertest|seqtest|sqltest|internal/e2e|internal/testsvc|internal/testca|internal/fakeclock)/' |
	while read -r f; do
		mkdir -p "$tmp/$(dirname "$f")"
		cp "$f" "$tmp/$f"
	done
cd "$tmp"
if [ $# -eq 0 ]; then
	set -- --most 200 --seconds 120
fi
duplicates "$@"
