#!/usr/bin/env bash
# Builds the release binaries of idforge VERSION, reproducibly:
#
#   scripts/release.sh 0.1.0                  # every target, into dist/0.1.0/
#   scripts/release.sh 0.1.0 linux/amd64      # some targets
#   scripts/release.sh --check 0.1.0 linux/amd64
#       builds the targets twice, the second time without the build cache
#       (go build -a), and fails unless both are byte for byte the same
#       (what .ci/run does for one target)
#
# VERSION must be the one in the VERSION file (the single source of truth;
# the clients' packages, the Helm chart and the manifests follow it, which
# clients/internal/clientgen's test checks). Each binary is static
# (CGO_ENABLED=0) and built the way the Dockerfile builds the image's
# (-tags grpcnotrace -trimpath -ldflags "-s -w …", see README "Packaging"),
# with the version, the commit and the commit's time stamped in
# (idforge version prints them): nothing in a binary depends on when, where
# or by whom it was built, so the same commit and Go toolchain give the
# same files. dist/VERSION/SHA256SUMS lists their digests.
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
if [ "${1:-}" = "--check" ]; then
	check=true
	shift
fi
if [ $# -lt 1 ]; then
	echo "usage: scripts/release.sh [--check] VERSION [GOOS/GOARCH...]" >&2
	exit 2
fi
version=$1
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(linux/amd64 linux/arm64 darwin/arm64 windows/amd64)
fi

if [ "$version" != "$(cat VERSION)" ]; then
	echo "release.sh: VERSION says $(cat VERSION), not $version: bump VERSION (and what follows it, see CHANGELOG.md) first" >&2
	exit 1
fi
go test -count=1 -run 'TestVersionEverywhere' ./clients/internal/clientgen >/dev/null ||
	{ echo "release.sh: a file does not carry version $version: go test ./clients/internal/clientgen says which" >&2; exit 1; }

commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "release.sh: warning: the work tree has uncommitted changes; the binaries say so (+dirty)" >&2
	commit="$commit+dirty"
fi
date=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
stamp="-X main.version=$version -X main.commit=$commit -X main.date=$date"

# build OUT_DIR [EXTRA_GO_FLAGS...]: every target into OUT_DIR, and SHA256SUMS.
build() {
	local out=$1
	shift
	mkdir -p "$out"
	for t in "${targets[@]}"; do
		local os=${t%/*} arch=${t#*/} ext=""
		[ "$os" = windows ] && ext=.exe
		local bin="idforge-$version-$os-$arch$ext"
		GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build -tags grpcnotrace -trimpath -ldflags "-s -w -buildid= $stamp" \
			-buildvcs=false "$@" -o "$out/$bin" ./cmd/idforge
	done
	(cd "$out" && sha256sum idforge-"$version"-* >SHA256SUMS)
}

if $check; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/idforge-release-check.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp/first"
	build "$tmp/second" -a
	if ! cmp "$tmp/first/SHA256SUMS" "$tmp/second/SHA256SUMS"; then
		echo "release.sh: two builds of $version differ:" >&2
		diff "$tmp/first/SHA256SUMS" "$tmp/second/SHA256SUMS" >&2 || true
		exit 1
	fi
	echo "release.sh: two builds of $version (${targets[*]}) are identical:"
	cat "$tmp/first/SHA256SUMS"
	host="$tmp/first/idforge-$version-$(go env GOOS)-$(go env GOARCH)"
	if [ -x "$host" ]; then
		line=$("$host" version)
		echo "$line"
		case "$line" in
		"idforge $version (commit $commit, built $date)") ;;
		*) echo "release.sh: the binary says \"$line\", not version $version, commit $commit, built $date" >&2; exit 1 ;;
		esac
	fi
	exit 0
fi

out=dist/$version
rm -rf "$out"
build "$out"
echo "idforge $version ($commit, $date), $(go version | cut -d' ' -f3):"
cat "$out/SHA256SUMS"
echo "The image: docker build --build-arg VERSION=$version --build-arg COMMIT=$commit --build-arg DATE=$date -t idforge/idforge:$version ."
