#!/usr/bin/env bash
# Measures what the idforge binary is made of: it builds cmd/idforge with
# the given go build flags, once with symbols and once stripped (-s -w),
# and shares the code out by module (go version -m lists the modules,
# go tool nm -size the size of every function). The "est. MB" column
# applies each module's share of the code to the stripped file: the
# function tables and most read-only data grow with the code.
#
# Usage: scripts/binsize.sh [go build flags...]
#   scripts/binsize.sh                                  # a plain go build
#   CGO_ENABLED=0 scripts/binsize.sh -tags grpcnotrace -trimpath   # the release build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build "$@" -o "$dir/full" ./cmd/idforge
go build "$@" -ldflags "-s -w" -o "$dir/stripped" ./cmd/idforge
full=$(stat -c %s "$dir/full")
stripped=$(stat -c %s "$dir/stripped")
printf 'with symbols %.2f MB, stripped (-s -w) %.2f MB\n' "$(echo "$full/1000000" | bc -l)" "$(echo "$stripped/1000000" | bc -l)"
go version -m "$dir/full" | awk '$1 == "mod" || $1 == "dep" { print $2 }' >"$dir/modules"
go tool nm -size "$dir/full" | awk -v stripped="$stripped" '
	NR == FNR { mods[$1] = 1; next }
	$3 != "T" && $3 != "t" { next }
	{
		name = $4
		sub(/\[.*/, "", name)           # type arguments of a generic function
		slash = match(name, /\/[^\/]*$/) # the package path ends at the first dot after the last slash
		rest = slash ? substr(name, slash) : name
		dot = index(rest, ".")
		pkg = dot ? substr(name, 1, (slash ? slash - 1 : 0) + dot - 1) : name
		owner = "std"
		for (p = pkg; p != ""; ) {
			if (p in mods) { owner = p; break }
			if (!sub(/\/[^\/]*$/, "", p)) break
		}
		code[owner] += $2
		total += $2
	}
	END {
		for (o in code) printf "%6.2f  %5.1f%%  %6.2f  %s\n", code[o] / 1e6, 100 * code[o] / total, code[o] / total * stripped / 1e6, o
	}' "$dir/modules" - | sort -rn | { printf '%6s  %6s  %6s  %s\n' "code" "share" "est.MB" "module"; cat; }
