#!/usr/bin/env bash
# Builds idforge and runs the Java and Python clients' tests against it:
# the conformance suite (clients/conformance), fail-over with a node killed
# under load, the range cache under threads, every error code. .ci/run
# calls it; run it by hand the same way:
#
#   clients/test.sh            # both clients
#   clients/test.sh java       # one
#
# Java is compiled with plain javac (Java 11 API, --release 11) and tested
# with JUnit 5's console launcher, both from Debian's packages
# (default-jdk-headless, junit5), which the script installs when absent
# and it may (root); pom.xml builds the same sources where Maven Central is
# reachable. Python needs only python3 (3.8 or later).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/idforge-clients-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
which=("${@:-java python}")
which=(${which[*]})

junit=/usr/share/java/junit-platform-console-standalone.jar
if [[ " ${which[*]} " == *" java "* ]] && { ! command -v javac >/dev/null || [ ! -f "$junit" ]; }; then
	echo "installing default-jdk-headless and junit5 (Debian)"
	if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then
		apt-get update -qq
	fi
	apt-get install -y default-jdk-headless junit5 >/dev/null ||
		{ apt-get update -qq && apt-get install -y default-jdk-headless junit5 >/dev/null; }
fi

echo "building idforge"
# As a release builds it (scripts/release.sh), so that a run of both
# compiles the packages once.
(cd "$root" && CGO_ENABLED=0 go build -tags grpcnotrace -trimpath -o "$work/idforge" ./cmd/idforge)
export IDFORGE_BINARY="$work/idforge" IDFORGE_CONFORMANCE="$root/clients/conformance"

for lang in "${which[@]}"; do
	case "$lang" in
	java)
		echo "Java client: compiling and testing"
		src="$root/clients/java/src"
		jars=/usr/share/java
		cp="$jars/junit-jupiter-api.jar:$jars/apiguardian-api.jar:$jars/opentest4j.jar"
		javac --release 11 -Xlint:all -Werror -d "$work/java/main" $(find "$src/main/java" -name '*.java')
		javac --release 11 -d "$work/java/test" -cp "$work/java/main:$cp" $(find "$src/test/java" -name '*.java')
		(cd "$root/clients/java" && java -jar "$junit" --disable-banner --details=summary \
			--fail-if-no-tests -cp "$work/java/main:$work/java/test" --scan-classpath "$work/java/test")
		;;
	python)
		echo "Python client: testing"
		(cd "$root/clients/python" && python3 -W error::ResourceWarning -m unittest discover -s tests -t . -v)
		;;
	*)
		echo "unknown client $lang (java, python)" >&2
		exit 2
		;;
	esac
done
