#!/usr/bin/env bash
# Builds the test servers iceops's suite runs against, into a cache OUTSIDE the
# checkout (a CI clone is fresh every time):
#   $ICEOPS_CACHE/bin/versitygw  S3 server (real SigV4), for the SQL catalog's warehouse
#   $ICEOPS_CACHE/bin/weed       SeaweedFS: Iceberg REST catalog + S3
#   $ICEOPS_CACHE/duckdb         npm prefix with @duckdb/node-api, the non-Go
#                                reader of the corpus test (scripts/duckdb-fingerprint.cjs)
# and installs PostgreSQL 15, and node and npm, from Debian when they are missing.
#
# Usage: scripts/tools.sh [all|postgres|versitygw|weed|duckdb]
# Idempotent: a binary already built at the pinned version is kept.
set -euo pipefail

CACHE="${ICEOPS_CACHE:-$HOME/.cache/iceops-ci}"
BIN="$CACHE/bin"
VERSITYGW_VERSION="v1.8.0"
SEAWEEDFS_VERSION="v0.0.0-20261109003541-7506e5f91cd6"
# The npm package ships DuckDB itself (its platform package holds the binary).
DUCKDB_NODE_VERSION="1.5.6-r.1"
mkdir -p "$BIN"

log() { printf '[tools %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

install_postgres() {
	# gcc: the race detector (go test -race) needs cgo. jq and curl: the
	# CI example's script (examples/ci/iceops-ci.sh), which a test runs.
	if [ -x /usr/lib/postgresql/15/bin/initdb ] && [ -x /usr/lib/postgresql/15/bin/pg_ctl ] &&
		command -v curl >/dev/null && command -v jq >/dev/null && command -v runuser >/dev/null && command -v gcc >/dev/null; then
		log "postgresql 15, curl, jq and gcc present"
		return
	fi
	log "installing postgresql, curl, jq and gcc (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q postgresql postgresql-15 curl jq util-linux gcc libc6-dev
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

install_duckdb() {
	local prefix="$CACHE/duckdb"
	local stamp="$prefix/.node-api-$DUCKDB_NODE_VERSION"
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		log "installing nodejs and npm (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q nodejs npm
	fi
	if [ -f "$stamp" ] && [ -d "$prefix/node_modules/@duckdb/node-api" ]; then
		log "@duckdb/node-api $DUCKDB_NODE_VERSION cached"
		return
	fi
	log "installing @duckdb/node-api $DUCKDB_NODE_VERSION into $prefix (npm)"
	mkdir -p "$prefix"
	# A package.json of its own: the prefix never touches the checkout.
	[ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
	npm install --prefix "$prefix" --no-audit --no-fund --save-exact "@duckdb/node-api@$DUCKDB_NODE_VERSION" >&2
	rm -f "$prefix"/.node-api-*
	touch "$stamp"
	log "@duckdb/node-api installed"
}

what="${1:-all}"
case "$what" in
all)
	install_postgres
	install_versitygw
	install_weed
	install_duckdb
	;;
postgres) install_postgres ;;
duckdb) install_duckdb ;;
versitygw) install_versitygw ;;
weed) install_weed ;;
*)
	echo "usage: $0 [all|postgres|versitygw|weed|duckdb]" >&2
	exit 2
	;;
esac
