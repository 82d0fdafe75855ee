#!/usr/bin/env bash
# The test command (README): every package's tests.
#
#   bash scripts/test.sh         tests what it can here. Tests that need a server
#                                (PostgreSQL, S3, the REST catalog, Spark, GCS and
#                                Azure emulators) or a tool (helm, DuckDB's reader)
#                                that is missing skip, and the run ends with one line
#                                counting them by what they lacked and naming:
#   bash scripts/test.sh -all    installs the tools (scripts/tools.sh all, cached
#                                outside the clone), starts the servers unless they
#                                are up (and stops them after), and runs everything
#                                with ICEWRIGHT_REQUIRE_SERVICES=1: a test that would
#                                skip fails instead.
#
# With ICEWRIGHT_REQUIRE_SERVICES=1 (CI) it is plain `go test`, whose own lines
# end the output. Extra arguments go to `go test` (e.g. -run X -v ./internal/e2e);
# without a package argument, ./... is tested.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == -all ]]; then
	shift
	bash scripts/tools.sh all
	if bash scripts/services.sh status >/dev/null 2>&1; then
		echo "test.sh: the servers are up; using them" >&2
	else
		ICEWRIGHT_SERVICES_DIR="$(mktemp -d /tmp/icewright-test-services.XXXXXX)"
		export ICEWRIGHT_SERVICES_DIR
		trap 'bash scripts/services.sh stop || true; rm -rf "$ICEWRIGHT_SERVICES_DIR"' EXIT
		bash scripts/services.sh start
	fi
	eval "$(bash scripts/services.sh env)"
	export ICEWRIGHT_REQUIRE_SERVICES=1
	# Not exec: the trap stops the servers this run started.
	bash scripts/test.sh "$@"
	exit
fi

has_pkg=false plain=false verbose=()
for a in "$@"; do
	case "$a" in
	./* | github.com/*) has_pkg=true ;;
	-json | -json=*) plain=true ;;
	-v | -v=true) verbose=(-v) ;;
	esac
done
if ! $has_pkg; then
	set -- "$@" ./...
fi
case "${ICEWRIGHT_REQUIRE_SERVICES:-}" in
1 | true | TRUE | True) plain=true ;;
esac
if $plain; then
	exec go test -count=1 -timeout "${ICEWRIGHT_TEST_TIMEOUT:-20m}" "$@"
fi

# go test -json through internal/testsummary: the same lines as plain go test,
# then what skipped for want of a server or tool.
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/testsummary" ./internal/testsummary
set +e
go test -json -count=1 -timeout "${ICEWRIGHT_TEST_TIMEOUT:-20m}" "$@" 2>&1 | "$bin/testsummary" "${verbose[@]}"
status=("${PIPESTATUS[@]}")
set -e
# go test's status; the summary's if go test passed but the summary broke.
if [[ ${status[0]} -ne 0 ]]; then
	exit "${status[0]}"
fi
exit "${status[1]}"
