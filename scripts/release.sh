#!/usr/bin/env bash
# release.sh: build release binaries of icewright into dist/.
#
#   bash scripts/release.sh                 # this machine's GOOS/GOARCH
#   bash scripts/release.sh linux/amd64 darwin/arm64 ...
#
# -trimpath drops this machine's paths from the binary, -ldflags="-s -w"
# drops the symbol table and DWARF (a smaller binary; panics still print
# their stack). No version is injected through -ldflags: the release number
# is cmd/icewright's `version` constant, and the commit and its date come from
# the Go build info, which `go build -buildvcs=true` stamps from the git
# checkout whatever GOFLAGS says (the
# tree must be clean for a release: `icewright version` says "with
# uncommitted changes" otherwise). CGO_ENABLED=0 gives a static binary;
# sqlite is then the pure-Go driver.
set -euo pipefail

cd "$(dirname "$0")/.."
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
	echo "release.sh: the work tree has uncommitted changes; the binary would say so" >&2
	if [[ ${ICEWRIGHT_RELEASE_DIRTY:-} != 1 ]]; then
		echo "release.sh: commit them, or set ICEWRIGHT_RELEASE_DIRTY=1 for a test build" >&2
		exit 1
	fi
fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	targets=("$(go env GOOS)/$(go env GOARCH)")
fi

mkdir -p dist
for t in "${targets[@]}"; do
	os=${t%/*} arch=${t#*/}
	out=dist/icewright-$os-$arch
	if [[ $os == windows ]]; then
		out+=.exe
	fi
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -buildvcs=true -trimpath -ldflags="-s -w" -o "$out" ./cmd/icewright
	# Go stamps no commit in a git worktree (its .git is a file) or an
	# export; a release that cannot say its commit is refused.
	if ! go version -m "$out" | grep -q 'vcs.revision='; then
		echo "release.sh: $out has no commit in its build info; build from a git clone" >&2
		exit 1
	fi
	size=$(wc -c <"$out")
	awk -v f="$out" -v n="$size" 'BEGIN { printf "%s\t%d bytes (%.1f MiB)\n", f, n, n / 1048576 }'
done
