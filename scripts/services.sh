#!/usr/bin/env bash
# Starts, on 127.0.0.1 only, the real servers that icewright's integration and
# end-to-end tests run against:
#
#   postgres   PostgreSQL 15, a private cluster   127.0.0.1:55432  (SQL catalog)
#   s3         versitygw, posix backend           127.0.0.1:7070   (S3 warehouse)
#   rest       SeaweedFS `weed mini`              127.0.0.1:8181   (Iceberg REST catalog)
#                                                 127.0.0.1:8333   (its S3)
#   spark      Spark Connect server, local mode   127.0.0.1:15002  (Spark with Iceberg)
#   gcs        fake-gcs-server, filesystem backend 127.0.0.1:4443  (GCS JSON API, gs:// warehouse)
#   azure      Azurite, blob service only         127.0.0.1:10000  (Azure Blob, abfs:// warehouse)
#
# Spark's catalogs are the tests' own: `local` (a JDBC catalog in a SQLite file
# with a warehouse directory, both under $ICEWRIGHT_SERVICES_DIR/spark), `pg` (a
# JDBC catalog in the PostgreSQL above, warehouse on versitygw) and `rest` (the
# REST catalog above). An icewright catalog labelled the same reads the same rows.
#
# Usage:
#   scripts/services.sh start [postgres|s3|rest|spark|gcs|azure]...   start (all by default); waits until ready
#   scripts/services.sh stop  [postgres|s3|rest|spark|gcs|azure]...   stop (all by default)
#   scripts/services.sh env                           print `export ICEWRIGHT_TEST_...` lines
#   scripts/services.sh status
#
# A developer runs:
#   scripts/tools.sh                    # once: installs PostgreSQL, builds versitygw, weed and fake-gcs-server, Azurite, Spark
#   scripts/services.sh start
#   eval "$(scripts/services.sh env)"
#   ICEWRIGHT_REQUIRE_SERVICES=1 bash scripts/test.sh
#   scripts/services.sh stop
#
# Binaries come from $ICEWRIGHT_CACHE/bin (scripts/tools.sh builds them there).
# Server state lives in $ICEWRIGHT_SERVICES_DIR (default /tmp/icewright-services),
# which `start` wipes: every start is a clean slate.
set -euo pipefail

CACHE="${ICEWRIGHT_CACHE:-$HOME/.cache/icewright-ci}"
BIN="$CACHE/bin"
STATE="${ICEWRIGHT_SERVICES_DIR:-/tmp/icewright-services}"
PGBIN="${ICEWRIGHT_PGBIN:-/usr/lib/postgresql/15/bin}"

PG_PORT=55432
S3_PORT=7070
REST_PORT=8181
REST_S3_PORT=8333
SPARK_PORT=15002
GCS_PORT=4443
AZURE_PORT=10000

# Fixed, test-only credentials: these servers listen on loopback only.
S3_ACCESS_KEY=icewrighttest
S3_SECRET_KEY=icewrighttest-secret
S3_BUCKET=icewright
REST_ACCESS_KEY=icewrightrest
REST_SECRET_KEY=icewrightrest-secret
REST_TABLE_BUCKET=icewright
REGION=us-east-1
# The tests create the bucket and the container (internal/testenv): creating
# an Azure container takes a SharedKey-signed request.
GCS_BUCKET=icewright
AZURE_CONTAINER=icewright
# Azurite's well-known development account (public, in Azure's docs).
AZURE_ACCOUNT=devstoreaccount1
AZURE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

log() { printf '[services %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

# wait_for NAME SECONDS CMD... : retries CMD every 0.2s until it succeeds.
wait_for() {
	local name=$1 secs=$2
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 0.2
	done
	log "$name ready"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() {
	local f=$1
	[ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# stop_pid FILE: TERM, then KILL after 10s, of the process (group) recorded in FILE.
stop_pid() {
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# --- PostgreSQL -------------------------------------------------------------

as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		# runuser keeps no controlling terminal and needs no password.
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start_postgres() {
	[ -x "$PGBIN/initdb" ] || die "PostgreSQL 15 not installed ($PGBIN/initdb missing): run scripts/tools.sh postgres"
	if port_open $PG_PORT; then
		die "127.0.0.1:$PG_PORT is already in use (another PostgreSQL? scripts/services.sh stop postgres)"
	fi
	local d="$STATE/postgres"
	rm -rf "$d"
	mkdir -p "$d/data" "$d/sock"
	if [ "$(id -u)" = 0 ]; then
		chown -R postgres:postgres "$d"
	fi
	chmod 700 "$d/data"
	as_postgres "$PGBIN/initdb" -D "$d/data" -U postgres --auth=trust -E UTF8 --no-sync >"$d/initdb.log" 2>&1 ||
		{
			cat "$d/initdb.log" >&2
			die "initdb failed"
		}
	as_postgres "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $d/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >"$d/pg_ctl.log" 2>&1 ||
		{
			cat "$d/pg_ctl.log" "$d/server.log" >&2
			die "pg_ctl start failed"
		}
	wait_for postgres 30 "$PGBIN/pg_isready" -h 127.0.0.1 -p $PG_PORT -U postgres ||
		die "postgres not ready; see $d/server.log"
}

stop_postgres() {
	local d="$STATE/postgres"
	if [ -f "$d/data/postmaster.pid" ]; then
		as_postgres "$PGBIN/pg_ctl" -D "$d/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
	fi
}

# --- versitygw (S3) ---------------------------------------------------------

start_s3() {
	[ -x "$BIN/versitygw" ] || die "$BIN/versitygw missing: run scripts/tools.sh versitygw"
	if port_open $S3_PORT; then
		die "127.0.0.1:$S3_PORT is already in use (scripts/services.sh stop s3)"
	fi
	local d="$STATE/s3"
	rm -rf "$d"
	mkdir -p "$d/root/$S3_BUCKET"
	# A bucket of versitygw's posix backend is a directory under its root.
	ROOT_ACCESS_KEY=$S3_ACCESS_KEY ROOT_SECRET_KEY=$S3_SECRET_KEY \
		setsid "$BIN/versitygw" --port "127.0.0.1:$S3_PORT" posix "$d/root" >"$d/server.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for "s3 (versitygw)" 60 port_open $S3_PORT || {
		tail -20 "$d/server.log" >&2
		die "versitygw did not start; see $d/server.log"
	}
	# The bucket must be listable with SigV4 credentials.
	wait_for "s3 bucket $S3_BUCKET" 30 curl -sf --aws-sigv4 "aws:amz:$REGION:s3" -H "x-amz-content-sha256: $EMPTY_SHA256" \
		--user "$S3_ACCESS_KEY:$S3_SECRET_KEY" "http://127.0.0.1:$S3_PORT/$S3_BUCKET?list-type=2" ||
		die "bucket $S3_BUCKET not listable on versitygw"
}

stop_s3() { stop_pid "$STATE/s3/pid"; }

# --- SeaweedFS (REST catalog + S3) -----------------------------------------

start_rest() {
	[ -x "$BIN/weed" ] || die "$BIN/weed missing: run scripts/tools.sh weed"
	for p in $REST_PORT $REST_S3_PORT; do
		if port_open "$p"; then
			die "127.0.0.1:$p is already in use (scripts/services.sh stop rest)"
		fi
	done
	local d="$STATE/rest"
	rm -rf "$d"
	mkdir -p "$d/data"
	AWS_ACCESS_KEY_ID=$REST_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$REST_SECRET_KEY \
		setsid "$BIN/weed" mini -dir="$d/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
		-webdav=false -admin.port.legacy=0 -master.telemetry=false -s3.port.lance=0 \
		>"$d/server.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for "rest catalog" 120 curl -sf "http://127.0.0.1:$REST_PORT/v1/config" || {
		tail -30 "$d/server.log" >&2
		die "weed REST catalog not ready on :$REST_PORT; see $d/server.log"
	}
	wait_for "rest s3" 60 port_open $REST_S3_PORT || die "weed S3 not ready on :$REST_S3_PORT"
	# A table bucket (S3 Tables API, SigV4 for service s3tables) is the REST
	# catalog's warehouse. Retry: the filer may still be settling.
	local out="$d/create-bucket.out"
	local deadline=$((SECONDS + 60))
	until curl -s -o "$out" -w '%{http_code}' --aws-sigv4 "aws:amz:$REGION:s3tables" \
		--user "$REST_ACCESS_KEY:$REST_SECRET_KEY" -H 'Content-Type: application/json' \
		-X PUT "http://127.0.0.1:$REST_S3_PORT/buckets" -d "{\"name\":\"$REST_TABLE_BUCKET\"}" | grep -q '^2\|^409'; do
		if ((SECONDS >= deadline)); then
			cat "$out" >&2 || true
			die "could not create table bucket $REST_TABLE_BUCKET on weed"
		fi
		sleep 0.5
	done
	log "rest table bucket $REST_TABLE_BUCKET created"
}

stop_rest() { stop_pid "$STATE/rest/pid"; }

# --- Spark Connect ---------------------------------------------------------

start_spark() {
	# The versions and paths are pinned in scripts/tools.sh, and only there.
	eval "$(bash "$(dirname "$0")/tools.sh" env)"
	[ -n "$ICEWRIGHT_SPARK_HOME" ] && [ -x "$ICEWRIGHT_SPARK_HOME/bin/spark-submit" ] ||
		die "Spark missing ($ICEWRIGHT_PY_VENV): run scripts/tools.sh spark"
	[ -n "$ICEWRIGHT_JAVA_HOME" ] || die "no JDK 17+: run scripts/tools.sh spark"
	if port_open $SPARK_PORT; then
		die "127.0.0.1:$SPARK_PORT is already in use (scripts/services.sh stop spark)"
	fi
	local d="$STATE/spark"
	rm -rf "$d"
	mkdir -p "$d/warehouse" "$d/tmp"
	local conf=(
		--conf spark.connect.grpc.binding.address=127.0.0.1
		--conf spark.connect.grpc.binding.port=$SPARK_PORT
		--conf spark.ui.enabled=false
		--conf spark.sql.shuffle.partitions=2
		--conf spark.local.dir="$d/tmp"
		--conf spark.driver.extraJavaOptions=-Djava.io.tmpdir="$d/tmp"
		--conf spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
		# Timestamps without an offset are read in UTC, whatever the machine's zone.
		--conf spark.sql.session.timeZone=UTC
	)
	# local: the JDBC catalog in a SQLite file, warehouse a directory.
	conf+=(
		--conf spark.sql.catalog.local=org.apache.iceberg.spark.SparkCatalog
		--conf spark.sql.catalog.local.type=jdbc
		--conf spark.sql.catalog.local.uri="jdbc:sqlite:$d/catalog.db"
		--conf spark.sql.catalog.local.warehouse="file://$d/warehouse"
	)
	# pg: the JDBC catalog in PostgreSQL, warehouse on versitygw.
	local s3=(
		io-impl=org.apache.iceberg.aws.s3.S3FileIO
		s3.path-style-access=true
		client.region=$REGION
	)
	conf+=(
		--conf spark.sql.catalog.pg=org.apache.iceberg.spark.SparkCatalog
		--conf spark.sql.catalog.pg.type=jdbc
		--conf spark.sql.catalog.pg.uri="jdbc:postgresql://127.0.0.1:$PG_PORT/postgres"
		--conf spark.sql.catalog.pg.jdbc.user=postgres
		--conf spark.sql.catalog.pg.warehouse="s3://$S3_BUCKET/spark-pg"
		--conf spark.sql.catalog.pg.s3.endpoint="http://127.0.0.1:$S3_PORT"
		--conf spark.sql.catalog.pg.s3.access-key-id=$S3_ACCESS_KEY
		--conf spark.sql.catalog.pg.s3.secret-access-key=$S3_SECRET_KEY
		--conf spark.sql.catalog.rest=org.apache.iceberg.spark.SparkCatalog
		--conf spark.sql.catalog.rest.type=rest
		--conf spark.sql.catalog.rest.uri="http://127.0.0.1:$REST_PORT"
		--conf spark.sql.catalog.rest.warehouse="s3://$REST_TABLE_BUCKET"
		# The REST catalog answers 403 without its OAuth client credential.
		--conf spark.sql.catalog.rest.credential="$REST_ACCESS_KEY:$REST_SECRET_KEY"
		--conf spark.sql.catalog.rest.s3.endpoint="http://127.0.0.1:$REST_S3_PORT"
		--conf spark.sql.catalog.rest.s3.access-key-id=$REST_ACCESS_KEY
		--conf spark.sql.catalog.rest.s3.secret-access-key=$REST_SECRET_KEY
	)
	local kv
	for kv in "${s3[@]}"; do
		conf+=(--conf "spark.sql.catalog.pg.$kv" --conf "spark.sql.catalog.rest.$kv")
	done
	JAVA_HOME="$ICEWRIGHT_JAVA_HOME" SPARK_HOME="$ICEWRIGHT_SPARK_HOME" SPARK_LOCAL_IP=127.0.0.1 \
		AWS_REGION=$REGION SPARK_LOG_DIR="$d" SPARK_PID_DIR="$d" \
		setsid "$ICEWRIGHT_SPARK_HOME/bin/spark-submit" \
		--class org.apache.spark.sql.connect.service.SparkConnectServer --name icewright-spark-connect \
		--master 'local[2]' --driver-memory "${ICEWRIGHT_SPARK_MEMORY:-2g}" \
		--jars "$ICEWRIGHT_SPARK_JARS" "${conf[@]}" >"$d/server.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for "spark connect" 180 port_open $SPARK_PORT || {
		tail -30 "$d/server.log" >&2
		die "Spark Connect not ready on :$SPARK_PORT; see $d/server.log"
	}
}

stop_spark() { stop_pid "$STATE/spark/pid"; }

# --- fake-gcs-server (GCS) -------------------------------------------------

start_gcs() {
	[ -x "$BIN/fake-gcs-server" ] || die "$BIN/fake-gcs-server missing: run scripts/tools.sh fakegcs"
	if port_open $GCS_PORT; then
		die "127.0.0.1:$GCS_PORT is already in use (scripts/services.sh stop gcs)"
	fi
	local d="$STATE/gcs"
	rm -rf "$d"
	mkdir -p "$d/root"
	setsid "$BIN/fake-gcs-server" -scheme http -host 127.0.0.1 -port $GCS_PORT \
		-public-host "127.0.0.1:$GCS_PORT" -external-url "http://127.0.0.1:$GCS_PORT" \
		-backend filesystem -filesystem-root "$d/root" -log-level warn \
		>"$d/server.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for "gcs (fake-gcs-server)" 60 curl -sf "http://127.0.0.1:$GCS_PORT/storage/v1/b" || {
		tail -20 "$d/server.log" >&2
		die "fake-gcs-server did not start; see $d/server.log"
	}
}

stop_gcs() { stop_pid "$STATE/gcs/pid"; }

# --- Azurite (Azure Blob) ---------------------------------------------------

start_azure() {
	local azurite="$CACHE/azurite/node_modules/.bin/azurite-blob"
	[ -x "$azurite" ] || die "$azurite missing: run scripts/tools.sh azurite"
	if port_open $AZURE_PORT; then
		die "127.0.0.1:$AZURE_PORT is already in use (scripts/services.sh stop azure)"
	fi
	local d="$STATE/azure"
	rm -rf "$d"
	mkdir -p "$d/data"
	# --skipApiVersionCheck: the Go SDK may speak a newer service version
	# than the emulator knows; --loose: ignore headers Azurite does not
	# implement instead of failing the request.
	setsid "$azurite" --blobHost 127.0.0.1 --blobPort $AZURE_PORT --location "$d/data" \
		--skipApiVersionCheck --loose --disableTelemetry \
		>"$d/server.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for "azure (azurite)" 60 port_open $AZURE_PORT || {
		tail -20 "$d/server.log" >&2
		die "Azurite did not start; see $d/server.log"
	}
}

stop_azure() { stop_pid "$STATE/azure/pid"; }

# --- commands ---------------------------------------------------------------

print_env() {
	eval "$(bash "$(dirname "$0")/tools.sh" env)"
	cat <<EOF
export ICEWRIGHT_TEST_PG_DSN='postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable'
export ICEWRIGHT_TEST_S3_ENDPOINT='http://127.0.0.1:$S3_PORT'
export ICEWRIGHT_TEST_S3_ACCESS_KEY='$S3_ACCESS_KEY'
export ICEWRIGHT_TEST_S3_SECRET_KEY='$S3_SECRET_KEY'
export ICEWRIGHT_TEST_S3_REGION='$REGION'
export ICEWRIGHT_TEST_S3_BUCKET='$S3_BUCKET'
export ICEWRIGHT_TEST_REST_URI='http://127.0.0.1:$REST_PORT'
export ICEWRIGHT_TEST_REST_WAREHOUSE='s3://$REST_TABLE_BUCKET'
export ICEWRIGHT_TEST_REST_S3_ENDPOINT='http://127.0.0.1:$REST_S3_PORT'
export ICEWRIGHT_TEST_REST_ACCESS_KEY='$REST_ACCESS_KEY'
export ICEWRIGHT_TEST_REST_SECRET_KEY='$REST_SECRET_KEY'
export ICEWRIGHT_TEST_REST_REGION='$REGION'
export ICEWRIGHT_TEST_VERSITYGW_BIN='$BIN/versitygw'
export ICEWRIGHT_TEST_WEED_BIN='$BIN/weed'
export ICEWRIGHT_DUCKDB_PREFIX='$CACHE/duckdb'
export ICEWRIGHT_TEST_SPARK_REMOTE='sc://127.0.0.1:$SPARK_PORT'
export ICEWRIGHT_TEST_SPARK_LOCAL_DB='$STATE/spark/catalog.db'
export ICEWRIGHT_TEST_SPARK_LOCAL_WAREHOUSE='$STATE/spark/warehouse'
export ICEWRIGHT_TEST_PYTHON='$ICEWRIGHT_PY_VENV/bin/python'
export ICEWRIGHT_TEST_GCS_ENDPOINT='http://127.0.0.1:$GCS_PORT/storage/v1/'
export ICEWRIGHT_TEST_GCS_BUCKET='$GCS_BUCKET'
export ICEWRIGHT_TEST_AZURE_ENDPOINT='127.0.0.1:$AZURE_PORT'
export ICEWRIGHT_TEST_AZURE_ACCOUNT='$AZURE_ACCOUNT'
export ICEWRIGHT_TEST_AZURE_KEY='$AZURE_KEY'
export ICEWRIGHT_TEST_AZURE_CONTAINER='$AZURE_CONTAINER'
EOF
}

status() {
	local rc=0
	if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p $PG_PORT 2>/dev/null; then echo "postgres up   127.0.0.1:$PG_PORT"; else
		echo "postgres down"
		rc=1
	fi
	if port_open $S3_PORT; then echo "s3       up   127.0.0.1:$S3_PORT"; else
		echo "s3       down"
		rc=1
	fi
	if port_open $REST_PORT; then echo "rest     up   127.0.0.1:$REST_PORT (s3 :$REST_S3_PORT)"; else
		echo "rest     down"
		rc=1
	fi
	if port_open $SPARK_PORT; then echo "spark    up   127.0.0.1:$SPARK_PORT (Spark Connect)"; else
		echo "spark    down"
		rc=1
	fi
	if port_open $GCS_PORT; then echo "gcs      up   127.0.0.1:$GCS_PORT (fake-gcs-server)"; else
		echo "gcs      down"
		rc=1
	fi
	if port_open $AZURE_PORT; then echo "azure    up   127.0.0.1:$AZURE_PORT (Azurite blob)"; else
		echo "azure    down"
		rc=1
	fi
	return $rc
}

services() {
	if [ $# -eq 0 ]; then
		echo postgres s3 rest spark gcs azure
	else
		for s in "$@"; do
			case "$s" in postgres | s3 | rest | spark | gcs | azure) echo "$s" ;; *) die "unknown service $s (postgres|s3|rest|spark|gcs|azure)" ;; esac
		done
	fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
start)
	mkdir -p "$STATE"
	chmod 755 "$STATE"
	for s in $(services "$@"); do
		"stop_$s"
		log "starting $s"
		"start_$s"
	done
	;;
stop)
	for s in $(services "$@"); do
		"stop_$s"
	done
	log "stopped"
	;;
env) print_env ;;
status) status ;;
*)
	sed -n '2,27p' "$0" >&2
	exit 2
	;;
esac
