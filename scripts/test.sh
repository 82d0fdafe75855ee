#!/usr/bin/env bash
# The test command (README): every package's tests. Tests that need a server
# skip with the command that starts it unless ICEWRIGHT_REQUIRE_SERVICES=1, where
# they fail instead. For the full suite:
#   scripts/services.sh start && eval "$(scripts/services.sh env)"
#   ICEWRIGHT_REQUIRE_SERVICES=1 bash scripts/test.sh
# Extra arguments go to `go test` (e.g. -run X -v ./internal/e2e); without a
# package argument, ./... is tested.
set -euo pipefail
cd "$(dirname "$0")/.."
has_pkg=false
for a in "$@"; do
	case "$a" in ./* | github.com/*) has_pkg=true ;; esac
done
if ! $has_pkg; then
	set -- "$@" ./...
fi
exec go test -count=1 -timeout "${ICEWRIGHT_TEST_TIMEOUT:-20m}" "$@"
