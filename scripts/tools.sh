#!/usr/bin/env bash
# Builds the test servers icewright's suite runs against, into a cache OUTSIDE the
# checkout (a CI clone is fresh every time):
#   $ICEWRIGHT_CACHE/bin/versitygw  S3 server (real SigV4), for the SQL catalog's warehouse
#   $ICEWRIGHT_CACHE/bin/weed       SeaweedFS: Iceberg REST catalog + S3
#   $ICEWRIGHT_CACHE/bin/fake-gcs-server  GCS emulator (JSON API and its batch endpoint)
#   $ICEWRIGHT_CACHE/bin/helm       Helm, for the chart's lint and render checks
#                                (deploy/helm/icewright, deploy/helm_test.go)
#   $ICEWRIGHT_CACHE/duckdb         npm prefix with @duckdb/node-api, the non-Go
#                                reader of the corpus test (scripts/duckdb-fingerprint.cjs)
#   $ICEWRIGHT_CACHE/azurite        npm prefix with azurite, the Azure Blob emulator
#   $ICEWRIGHT_CACHE/py-<pins>      Python venv: pyspark (Spark itself, with its Spark
#                                Connect server), PyIceberg and Zamboni (iceberg-zamboni)
#   $ICEWRIGHT_CACHE/jars           the Iceberg Spark runtime and what its catalogs need
# and installs PostgreSQL 15, node and npm, a JDK and python3-venv from Debian
# when they are missing.
#
# Every version the suite runs is pinned here, and only here (scripts/services.sh
# and the tests read them through `scripts/tools.sh env`).
#
# Usage: scripts/tools.sh [all|postgres|versitygw|weed|fakegcs|azurite|duckdb|spark|helm|env]
# Idempotent: a binary already built at the pinned version is kept.
set -euo pipefail

CACHE="${ICEWRIGHT_CACHE:-$HOME/.cache/icewright-ci}"
BIN="$CACHE/bin"
VERSITYGW_VERSION="v1.8.0"
SEAWEEDFS_VERSION="v0.0.0-20261109003541-7506e5f91cd6"
FAKE_GCS_VERSION="v1.56.1"
# Helm is not in Debian; it builds from its Go module (3-8 min cold).
HELM_VERSION="v4.3.2"
AZURITE_VERSION="3.37.0"
# The npm package ships DuckDB itself (its platform package holds the binary).
DUCKDB_NODE_VERSION="1.5.6-r.1"
# Spark 4.1 (Scala 2.13) is the newest Spark with an Iceberg runtime; the
# pyspark wheel carries Spark itself, its Spark Connect server included.
PYSPARK_VERSION="4.1.4"
ICEBERG_JAVA_VERSION="1.12.0"
PYICEBERG_VERSION="0.12.0"
ZAMBONI_VERSION="0.7.0"
SQLITE_JDBC_VERSION="3.54.1.0"
PG_JDBC_VERSION="42.7.14"
MAVEN_CENTRAL="${ICEWRIGHT_MAVEN_URL:-https://repo1.maven.org/maven2}"
PY_PINS="pyspark[connect]==$PYSPARK_VERSION pyiceberg[pyarrow,sql-sqlite,sql-postgres]==$PYICEBERG_VERSION iceberg-zamboni==$ZAMBONI_VERSION"
# The venv's directory names its pins: a changed pin is a new venv.
PY_VENV="$CACHE/py-$(printf '%s' "$PY_PINS" | sha256sum | cut -c1-12)"
JARS="$CACHE/jars"
SPARK_JARS=(
	"org/apache/iceberg/iceberg-spark-runtime-4.1_2.13/$ICEBERG_JAVA_VERSION/iceberg-spark-runtime-4.1_2.13-$ICEBERG_JAVA_VERSION.jar"
	"org/apache/iceberg/iceberg-aws-bundle/$ICEBERG_JAVA_VERSION/iceberg-aws-bundle-$ICEBERG_JAVA_VERSION.jar"
	"org/xerial/sqlite-jdbc/$SQLITE_JDBC_VERSION/sqlite-jdbc-$SQLITE_JDBC_VERSION.jar"
	"org/postgresql/postgresql/$PG_JDBC_VERSION/postgresql-$PG_JDBC_VERSION.jar"
)
mkdir -p "$BIN"

log() { printf '[tools %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

install_postgres() {
	# gcc: the race detector (go test -race) needs cgo. jq and curl: the
	# CI example's script (examples/ci/icewright-ci.sh), which a test runs.
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

# go_install NAME PACKAGE VERSION: builds $BIN/NAME from PACKAGE@VERSION
# unless the stamp $BIN/.NAME-VERSION says it is there.
go_install() {
	local name=$1 pkg=$2 version=$3
	local stamp="$BIN/.$name-$version"
	if [ -x "$BIN/$name" ] && [ -f "$stamp" ]; then
		log "$name $version cached"
		return
	fi
	log "building $name $version"
	# A module-less go install does not touch any go.mod.
	(cd "$CACHE" && GOFLAGS=-buildvcs=false GOBIN="$BIN" nice go install "$pkg@$version")
	rm -f "$BIN/.$name"-*
	touch "$stamp"
	log "$name built"
}

install_versitygw() { go_install versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"; }

install_fakegcs() { go_install fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION"; }

install_helm() { go_install helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION"; }

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
module icewright-tools-weed

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

need_node() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		log "installing nodejs and npm (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q nodejs npm
	fi
}

# npm_install PREFIX STAMP PACKAGE VERSION PATH: installs PACKAGE@VERSION
# into the npm prefix PREFIX unless the stamp file PREFIX/.STAMP-VERSION and
# PREFIX/PATH (what the tests use) are there.
npm_install() {
	local prefix=$1 stamp=$2 pkg=$3 version=$4 path=$5
	need_node
	if [ -f "$prefix/.$stamp-$version" ] && [ -e "$prefix/$path" ]; then
		log "$pkg $version cached"
		return
	fi
	log "installing $pkg $version into $prefix (npm)"
	mkdir -p "$prefix"
	# A package.json of its own: the prefix never touches the checkout.
	[ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
	npm install --prefix "$prefix" --no-audit --no-fund --save-exact "$pkg@$version" >&2
	rm -f "$prefix/.$stamp"-*
	touch "$prefix/.$stamp-$version"
	log "$pkg installed"
}

install_duckdb() {
	npm_install "$CACHE/duckdb" node-api @duckdb/node-api "$DUCKDB_NODE_VERSION" node_modules/@duckdb/node-api
}

# Azurite 3.37 declares node >= 22 but runs its blob service on Debian's
# node 20 (npm warns, EBADENGINE; the suite's Azure tests pass on it).
install_azurite() {
	npm_install "$CACHE/azurite" azurite azurite "$AZURITE_VERSION" node_modules/.bin/azurite-blob
}

# java_home prints a JDK 17 or newer (Spark 4.1 needs 17): $JAVA_HOME, else
# the machine's java.
java_home() {
	local j
	for j in "${JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-*; do
		if [ -n "$j" ] && [ -x "$j/bin/java" ]; then
			echo "$j"
			return 0
		fi
	done
	if command -v java >/dev/null; then
		dirname "$(dirname "$(readlink -f "$(command -v java)")")"
		return 0
	fi
	return 1
}

install_spark() {
	if ! java_home >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
		log "installing a JDK and python3-venv (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q openjdk-17-jre-headless python3 python3-venv
	fi
	mkdir -p "$JARS"
	local j f
	for j in "${SPARK_JARS[@]}"; do
		f="$JARS/$(basename "$j")"
		if [ -s "$f" ]; then
			continue
		fi
		log "downloading $(basename "$j") (Maven Central)"
		curl -sfSL --retry 3 -o "$f.tmp" "$MAVEN_CENTRAL/$j"
		mv "$f.tmp" "$f"
	done
	if [ -f "$PY_VENV/.installed" ]; then
		log "python venv cached: $PY_PINS"
		return
	fi
	log "installing into $PY_VENV (pip): $PY_PINS"
	rm -rf "$PY_VENV"
	python3 -m venv "$PY_VENV"
	# shellcheck disable=SC2086 # the pins are words
	"$PY_VENV/bin/pip" install -q --disable-pip-version-check $PY_PINS >&2
	touch "$PY_VENV/.installed"
	log "python venv installed"
}

# print_env: where the Spark and Python tools are, for scripts/services.sh.
print_env() {
	local jars=() j
	for j in "${SPARK_JARS[@]}"; do
		jars+=("$JARS/$(basename "$j")")
	done
	local IFS=,
	echo "ICEWRIGHT_PY_VENV='$PY_VENV'"
	local home
	home="$(ls -d "$PY_VENV"/lib/python3*/site-packages/pyspark 2>/dev/null | head -1)"
	echo "ICEWRIGHT_SPARK_HOME='$home'"
	echo "ICEWRIGHT_SPARK_JARS='${jars[*]}'"
	echo "ICEWRIGHT_JAVA_HOME='$(java_home || true)'"
	echo "ICEWRIGHT_PYSPARK_VERSION='$PYSPARK_VERSION'"
	echo "ICEWRIGHT_ICEBERG_JAVA_VERSION='$ICEBERG_JAVA_VERSION'"
	echo "ICEWRIGHT_PYICEBERG_VERSION='$PYICEBERG_VERSION'"
	echo "ICEWRIGHT_ZAMBONI_VERSION='$ZAMBONI_VERSION'"
	echo "ICEWRIGHT_HELM='$BIN/helm'"
}

what="${1:-all}"
case "$what" in
all)
	install_postgres
	install_versitygw
	install_weed
	install_duckdb
	install_spark
	install_fakegcs
	install_azurite
	install_helm
	;;
postgres) install_postgres ;;
duckdb) install_duckdb ;;
versitygw) install_versitygw ;;
weed) install_weed ;;
fakegcs) install_fakegcs ;;
azurite) install_azurite ;;
helm) install_helm ;;
spark) install_spark ;;
env) print_env ;;
*)
	echo "usage: $0 [all|postgres|versitygw|weed|fakegcs|azurite|duckdb|spark|helm|env]" >&2
	exit 2
	;;
esac
