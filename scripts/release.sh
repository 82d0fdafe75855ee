#!/usr/bin/env bash
# release.sh: build release binaries of icewright, its container image and
# their checksums into dist/.
#
#   bash scripts/release.sh                 # this machine's GOOS/GOARCH
#   bash scripts/release.sh linux/amd64 darwin/arm64 ...
#
# Whatever the targets, linux/amd64 and linux/arm64 are built too, for the
# image (./internal/ociimage/mkimage, no Docker daemon):
#   dist/icewright-image/        OCI layout with both platforms (push it with
#                                `skopeo copy --all oci:dist/icewright-image docker://REPO:TAG`
#                                or `crane push dist/icewright-image REPO:TAG --index`)
#   dist/icewright-image.tar     the same layout as one tar (`docker load -i`, `podman load -i`)
#   dist/icewright-image.digest  the image index's digest: the same commit gives the same one
#   dist/SHA256SUMS              sha256sum of every binary and of the tar (`sha256sum -c`)
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
image_targets=(linux/amd64 linux/arm64)
for t in "${image_targets[@]}"; do
	if [[ " ${targets[*]} " != *" $t "* ]]; then
		targets+=("$t")
	fi
done
# The release number: cmd/icewright's constant, read from its one place.
version=$(sed -n 's/^const version = "\(.*\)"$/\1/p' cmd/icewright/run.go)
if [[ -z $version ]]; then
	echo "release.sh: no 'const version = \"...\"' in cmd/icewright/run.go" >&2
	exit 1
fi

mkdir -p dist
outs=()
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
	outs+=("${out#dist/}")
done

image_args=()
for t in "${image_targets[@]}"; do
	image_args+=("$t=dist/icewright-${t%/*}-${t#*/}")
done
# The builder runs on this machine (GOOS/GOARCH of the host, not a target's).
GOOS= GOARCH= CGO_ENABLED=0 go run ./internal/ociimage/mkimage -version "$version" -out dist "${image_args[@]}"
outs+=(icewright-image.tar)
(cd dist && sha256sum "${outs[@]}" >SHA256SUMS)
echo "dist/SHA256SUMS"
