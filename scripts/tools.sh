#!/usr/bin/env bash
# Builds the test servers iceops's suite runs against, into a cache OUTSIDE the
# checkout (a CI clone is fresh every time):
#   $ICEOPS_CACHE/bin/versitygw  S3 server (real SigV4), for the SQL catalog's warehouse
#   $ICEOPS_CACHE/bin/weed       SeaweedFS: Iceberg REST catalog + S3
# and installs PostgreSQL 15 from Debian when it is missing.
#
# Usage: scripts/tools.sh [all|postgres|versitygw|weed]
# Idempotent: a binary already built at the pinned version is kept.
set -euo pipefail

CACHE="${ICEOPS_CACHE:-$HOME/.cache/iceops-ci}"
BIN="$CACHE/bin"
VERSITYGW_VERSION="v1.8.0"
SEAWEEDFS_VERSION="v0.0.0-20261109003541-7506e5f91cd6"
mkdir -p "$BIN"

log() { printf '[tools %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

install_postgres() {
	# gcc: the race detector (go test -race) needs cgo.
	if [ -x /usr/lib/postgresql/15/bin/initdb ] && [ -x /usr/lib/postgresql/15/bin/pg_ctl ] &&
		command -v curl >/dev/null && command -v runuser >/dev/null && command -v gcc >/dev/null; then
		log "postgresql 15, curl and gcc present"
		return
	fi
	log "installing postgresql, curl and gcc (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q postgresql postgresql-15 curl util-linux gcc libc6-dev
	# Debian starts a cluster on 5432 on install; we run our own private one.
	if command -v pg_ctlcluster >/dev/null 2>&1; then
		pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
	fi
}

install_versitygw() {
	local stamp="$BIN/.versitygw-$VERSITYGW_VERSION"
	if [ -x "$BIN/versitygw" ] && [ -f "$stamp" ]; then
		log "versitygw $VERSITYGW_VERSION cached"
		return
	fi
	log "building versitygw $VERSITYGW_VERSION"
	# A module-less go install does not touch any go.mod.
	(cd "$CACHE" && GOFLAGS=-buildvcs=false GOBIN="$BIN" nice go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION")
	rm -f "$BIN"/.versitygw-*
	touch "$stamp"
	log "versitygw built"
}

install_weed() {
	local stamp="$BIN/.weed-$SEAWEEDFS_VERSION"
	if [ -x "$BIN/weed" ] && [ -f "$stamp" ]; then
		log "weed $SEAWEEDFS_VERSION cached"
		return
	fi
	log "building weed (SeaweedFS $SEAWEEDFS_VERSION); 5-10 min cold"
	local mod="$CACHE/tools-weed"
	mkdir -p "$mod"
	cat >"$mod/go.mod" <<GOMOD
module iceops-tools-weed

go 1.26

replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
GOMOD
	cat >"$mod/tools.go" <<'GOSRC'
//go:build tools

package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
GOSRC
	(
		cd "$mod"
		export GOFLAGS="-buildvcs=false -tags=tools"
		nice go get "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION"
		nice go mod tidy
		GOFLAGS=-buildvcs=false nice go build -o "$BIN/weed.tmp" github.com/seaweedfs/seaweedfs/weed
	)
	mv "$BIN/weed.tmp" "$BIN/weed"
	rm -f "$BIN"/.weed-*
	touch "$stamp"
	log "weed built"
}

what="${1:-all}"
case "$what" in
all)
	install_postgres
	install_versitygw
	install_weed
	;;
postgres) install_postgres ;;
versitygw) install_versitygw ;;
weed) install_weed ;;
*)
	echo "usage: $0 [all|postgres|versitygw|weed]" >&2
	exit 2
	;;
esac
