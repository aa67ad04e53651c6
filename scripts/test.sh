#!/usr/bin/env bash
# The one test command: vets and tests idforge with the race detector,
# then the modules of its own that keep heavy test-only dependencies out
# of idforge's go.mod: api/openapitest (real answers validated against
# api/openapi.json), server/ui/uitest (the admin page in Chromium) and
# deploy/deploytest (the Helm chart and Kustomize manifests; a slow suite,
# run with CI=true or IDFORGE_SLOW=1). Extra arguments go to every go test
# (e.g. -short, -v); CI=true in the environment makes a missing service a
# failure in the nested modules too. .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go test -race -timeout 30m "$@" ./...

# nested DIR ARGS...: vets and tests the module in DIR with ARGS (this
# script's arguments among them).
nested() {
	local dir=$1
	shift
	(cd "$dir" && go vet ./... && go test "$@" ./...)
}
# The OpenAPI validator and Helm are not idforge's code: building them with
# the race detector takes minutes the checks do not need.
nested api/openapitest "$@"
nested server/ui/uitest -race "$@"
if [[ ${CI:-} == true || ${IDFORGE_SLOW:-} == 1 ]]; then
	# The chart and manifests are read from outside the module, where go
	# test's cache does not see them change: -count=1.
	nested deploy/deploytest -count=1 "$@"
else
	echo "deploy/deploytest skipped: a slow suite, run it with IDFORGE_SLOW=1 (CI runs it)"
fi
