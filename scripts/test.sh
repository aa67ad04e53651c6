#!/usr/bin/env bash
# The one test command: vets and tests idforge with the race detector.
# Extra arguments go to go test (e.g. -short, -run X). .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go test -race "$@" ./...
