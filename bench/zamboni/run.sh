#!/usr/bin/env bash
# Zamboni head-to-head (issue 27, item 5): icewright against Zamboni (PyPI
# iceberg-zamboni, the version scripts/tools.sh pins) on the same tables, in
# the same run, each run starting from the same pristine copy:
#
#   compaction   bench.events (compactbench setup: COMMITS appends of ROWS rows,
#                4 identity(region) partitions, zstd): binpack, sort by the
#                table's sort order (x, y) (a copy made with that order), and
#                z-order on (x, y);
#   maintenance  TABLES small tables (zambench lake: TCOMMITS appends of TROWS
#                rows over 4 day partitions, history over ~9 days, old and young
#                stray files): compaction + snapshot expiry + orphan removal;
#   orphans      bench.orphans (orphanbench setup: REFERENCED files in 20
#                snapshots, ORPHANS unreferenced 10-day-old files; all empty);
#   cluster      (not in the default CASES) the sorted bench.events after sort
#                and z-order at CTARGET bytes (default 200 KiB: ~128 files at
#                1M rows): files and row groups a range filter on x, on y and
#                on both skips (cluster.py); one verified run each, not timed.
#
#   bench/zamboni/run.sh [RUNS]      (default 3; SMOKE=1: tiny tables, 1 run)
#
# Both tools run as their CLIs at their defaults (icewright: `icewright apply
# -auto-approve` on a policy the script writes; Zamboni: `zamboni compact`,
# `maintenance`, `remove-orphans` with --local-warehouse and --yes), except
# what selects the same work: the strategy (icewright `strategy`/`zorder_columns`;
# Zamboni --sort-by-table-order, or a table-config.json with ordering.mode
# "zorder" on the same columns) and, for maintenance, Zamboni's
# --operations compact,expire,remove-orphans (its maintenance also rewrites
# manifests and removes dangling deletes by default; the icewright policy has
# compaction, snapshot_retention and orphan_files blocks with their defaults).
# The tools alternate which goes first in each pair. After every run
# bench/zamboni/check.py (PyIceberg + DuckDB, neither tool's code) reads the
# tables back: the row count and a digest of every value must equal the
# pristine table's, and no file a snapshot reaches may be missing; for sort,
# no data file may have a row out of (x, y) order. Any failure stops the
# script: a run that loses data is not a result.
#
# Prints each run and, per case and tool, min / median / max of wall time,
# user+sys CPU and peak RSS (/usr/bin/time -v), and of the per-pair ratios
# icewright / Zamboni. Env: WORK (scratch, default /tmp/icewright-zamboni-bench),
# CASES ("compaction maintenance orphans"), STRATEGIES ("binpack sort zorder"),
# COMMITS ROWS (200 5000), TABLES TCOMMITS TROWS (200 20 100),
# REFERENCED ORPHANS (20000 2000), ZSTD_LEVEL (unset: the compaction table sets
# no write.parquet.compression-level, so each tool writes zstd at its own
# default, icewright 3 like Iceberg Java, Zamboni 1 like pyarrow; a number: the
# table sets that level, which both tools honor, so both compress alike). Pristine tables are kept in WORK (their
# paths are absolute in the metadata) and rebuilt after a day (the
# maintenance lake's ages are relative to when it was built).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-3}
if [[ -n ${SMOKE:-} ]]; then
	RUNS=1
	: "${COMMITS:=10}" "${ROWS:=200}" "${TABLES:=3}" "${TCOMMITS:=8}" "${TROWS:=20}" "${REFERENCED:=200}" "${ORPHANS:=20}"
fi
COMMITS=${COMMITS:-200}
ROWS=${ROWS:-5000}
TABLES=${TABLES:-200}
TCOMMITS=${TCOMMITS:-20}
TROWS=${TROWS:-100}
REFERENCED=${REFERENCED:-20000}
ORPHANS=${ORPHANS:-2000}
CASES=${CASES:-compaction maintenance orphans}
STRATEGIES=${STRATEGIES:-binpack sort zorder}
WORK=${WORK:-/tmp/icewright-zamboni-bench}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

# Zamboni and the checker's PyIceberg and DuckDB: the suite's venv, whose
# versions scripts/tools.sh pins (installed here when missing).
eval "$(bash "$ROOT/scripts/tools.sh" env)"
if [[ ! -f $ICEWRIGHT_PY_VENV/.installed ]]; then
	bash "$ROOT/scripts/tools.sh" spark
fi
ZAMBONI=$ICEWRIGHT_PY_VENV/bin/zamboni
PY=$ICEWRIGHT_PY_VENV/bin/python
zv=$("$ZAMBONI" --version 2>&1)
[[ $zv == *"$ICEWRIGHT_ZAMBONI_VERSION"* ]] || { echo "zamboni --version says '$zv', want $ICEWRIGHT_ZAMBONI_VERSION" >&2; exit 1; }
# Zamboni reads ./zamboni.yml, ./.env and ZAMBONI_* settings: run it in an
# empty directory with none of them.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^ZAMBONI_' || true)
ZRUN=$WORK/zamboni-cwd
rm -rf "$ZRUN" && mkdir -p "$ZRUN"

(cd "$ROOT" && for c in compactbench:bench/compaction/cmd/compactbench orphanbench:bench/orphans/cmd/orphanbench \
	zambench:bench/zamboni/cmd/zambench icewright:cmd/icewright; do go build -o "$WORK/${c%%:*}" "./${c#*:}"; done)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/icewright"
ICEWRIGHT=$WORK/icewright
CHECK=("$PY" "$ROOT/bench/zamboni/check.py")

echo "== icewright $(git -C "$ROOT" rev-parse --short HEAD)$([[ -n $(git -C "$ROOT" status --porcelain) ]] && echo ' + working tree'), $zv ($("$PY" -c 'import pyiceberg, duckdb; print("pyiceberg", pyiceberg.__version__, "duckdb", duckdb.__version__)'))"
echo "== machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

# pristine NAME BUILD...: $WORK/pristine-NAME, built by BUILD (with $T as the
# table directory, where the tables live during runs) unless it exists and is
# younger than a day.
pristine() {
	local name=$1
	shift
	P=$WORK/pristine-$name
	T=$WORK/tables-${name%%-*}
	if [[ ! -f $P/.done ]] || [[ -n $(find "$P/.done" -mmin +1440) ]]; then
		rm -rf "$P" "$T"
		echo "building $name ..."
		"$@" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
		cp -a "$T" "$P"
		touch "$P/.done"
	fi
}
restore() { rm -rf "$T" && cp -a "$P" "$T" && rm -f "$T/.done"; }

# measure CMD...: runs CMD under /usr/bin/time; sets wall (s), rss (KiB), cpu (s).
measure() {
	local out=$WORK/time.txt
	/usr/bin/time -v "$@" >"$WORK/stdout" 2>"$out" || { cat "$out" "$WORK/stdout" >&2; echo "FAILED: $*" >&2; exit 1; }
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
	cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$out")
}

# verify WHAT CHECKARGS...: check.py on $T must agree with the pristine
# reading on rows and digest, reach no missing file, and (sort) break no order.
verify() {
	local what=$1
	shift
	got=$("${CHECK[@]}" "$T" "$@")
	local key
	key=$(echo "$got" | sed 's/.*"fingerprint": \("[0-9-]*"\).*"missing": \([0-9]*\).*"rows": \([0-9]*\).*/\1 \2 \3/')
	if [[ $key != "$EXPECT" ]]; then
		echo "$what CHANGED THE DATA: $got (want digest, missing, rows = $EXPECT)" >&2
		exit 1
	fi
	if [[ ${SORTCHECK:-} == 1 ]] && ! echo "$got" | grep -q '"order_breaks_max": 0,'; then
		echo "$what left rows out of order: $got" >&2
		exit 1
	fi
}

RESULTS=$WORK/results.txt
: >"$RESULTS"
declare -A state
# pair CASE I CHECKARGS -- ICEWRIGHT_CMD... -- ZAMBONI_CMD...: one interleaved pair
# (odd runs icewright first), each from the pristine copy, each verified.
pair() {
	local case=$1 i=$2
	shift 2
	local cargs=() icmd=() zcmd=()
	while [[ $1 != -- ]]; do cargs+=("$1"); shift; done
	shift
	while [[ $1 != -- ]]; do icmd+=("$1"); shift; done
	shift
	zcmd=("$@")
	local order=(icewright zamboni)
	((i % 2 == 0)) && order=(zamboni icewright)
	local who
	for who in "${order[@]}"; do
		restore
		if [[ $who == icewright ]]; then
			measure env NO_COLOR=1 "${icmd[@]}"
			grep -q 'Apply complete' "$WORK/stdout" || { echo "icewright did not apply:" >&2; cat "$WORK/stdout" >&2; exit 1; }
		else
			measure env -C "$ZRUN" "${zcmd[@]}"
		fi
		cp "$WORK/stdout" "$WORK/last-$case-$who.out"
		verify "$who ($case run $i)" "${cargs[@]}"
		echo "$case $i $who $wall $rss $cpu" >>"$RESULTS"
		state[$who]=$(echo "$got" | sed 's/.*"data_files": \([0-9]*\), "files_on_disk": \([0-9]*\).*"snapshots": \([0-9]*\).*/data files \1, on disk \2, snapshots \3/')
		printf '  %-22s run %d %-8s %7.2f s  cpu %7.2f s  %7.1f MiB  %s\n' "$case" "$i" "$who" "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)" "${state[$who]}"
	done
	# Same rows is required (verify); the same end state is what makes the
	# times comparable, so a difference is reported beside them.
	[[ ${state[icewright]} == "${state[zamboni]}" ]] || echo "  NOTE: different end states: icewright ${state[icewright]}; zamboni ${state[zamboni]}"
}

# icewright_cfg DIR CATALOGDIR POLICYBODY SELECTOR: the icewright configuration.
icewright_cfg() {
	mkdir -p "$1"
	cat >"$1/bench.icewright.hcl" <<EOF
catalog "local" {
  type      = "sql"
  uri       = "sqlite:$2/catalog.db"
  warehouse = "$2/warehouse"
}

policy "bench" {
$3
}

$4 {
  policy = policy.bench
}
EOF
}

expect() { # the pristine reading: digest, missing (0), rows
	restore
	local got
	got=$("${CHECK[@]}" "$T" "$@")
	EXPECT=$(echo "$got" | sed 's/.*"fingerprint": \("[0-9-]*"\).*"missing": \([0-9]*\).*"rows": \([0-9]*\).*/\1 \2 \3/')
	echo "  pristine: $got"
}

for case in $CASES; do
	case $case in
	compaction)
		for s in $STRATEGIES; do
			sorted=() ZARGS=() SORTCHECK=0 body="  compaction {
    strategy = \"$s\""
			case $s in
			sort) sorted=(-sorted) ZARGS=(--sort-by-table-order) SORTCHECK=1 ;;
			zorder)
				body+="
    zorder_columns = [\"x\", \"y\"]"
				echo '{"version": 2, "warehouse": "local", "namespaces": {"bench": {"tables": {"events": {"ordering": {"mode": "zorder", "zorder": {"columns": ["x", "y"]}}}}}}}' >"$WORK/zorder.json"
				ZARGS=(--table-config "$WORK/zorder.json")
				;;
			esac
			body+="
  }"
			# The sorted copy is a different table: its own pristine name, same directory.
			level=() lname=""
			[[ -n ${ZSTD_LEVEL:-} ]] && level=(-zstd-level "$ZSTD_LEVEL") lname="-zstd$ZSTD_LEVEL"
			pristine "events-$COMMITS-$ROWS${sorted[*]}$lname" bash -c "'$WORK/compactbench' setup -dir '$WORK/tables-events' -commits $COMMITS -rows $ROWS ${sorted[*]} ${level[*]} && '$WORK/zambench' rename -dir '$WORK/tables-events'"
			icewright_cfg "$WORK/cfg-compact-$s" "$T" "$body" 'table "local.bench.events"'
			echo "== compaction $s: $COMMITS x $ROWS rows ($P)"
			cargs=()
			[[ $s == sort ]] && cargs=(--order x,y)
			expect "${cargs[@]}"
			for i in $(seq 1 "$RUNS"); do
				pair "compaction-$s" "$i" "${cargs[@]}" -- "$ICEWRIGHT" -chdir="$WORK/cfg-compact-$s" apply -auto-approve -no-color \
					-- "$ZAMBONI" compact bench.events --local-warehouse "$T" "${ZARGS[@]}" --yes
			done
			SORTCHECK=0
		done
		;;
	maintenance)
		pristine "lake-$TABLES-$TCOMMITS-$TROWS" "$WORK/zambench" lake -dir "$WORK/tables-lake" -tables "$TABLES" -commits "$TCOMMITS" -rows "$TROWS"
		icewright_cfg "$WORK/cfg-maintain" "$T" "  compaction {}
  snapshot_retention {}
  orphan_files {}" 'tables "local.bench.*"'
		"$PY" -c 'import json, sys; print(json.dumps({"version": 2, "warehouse": "local", "namespaces": {"bench": {"tables": {"t%03d" % i: {} for i in range(int(sys.argv[1]))}}}}))' "$TABLES" >"$WORK/lake.json"
		echo "== maintenance: $TABLES tables of $TCOMMITS x $TROWS rows ($P)"
		expect
		for i in $(seq 1 "$RUNS"); do
			pair maintenance "$i" -- "$ICEWRIGHT" -chdir="$WORK/cfg-maintain" apply -auto-approve -no-color \
				-- "$ZAMBONI" maintenance --local-warehouse "$T" --table-config "$WORK/lake.json" --operations compact,expire,remove-orphans --yes
		done
		;;
	orphans)
		pristine "orphans-$REFERENCED-$ORPHANS" bash -c "'$WORK/orphanbench' setup -dir '$WORK/tables-orphans' -referenced $REFERENCED -orphans $ORPHANS && '$WORK/zambench' rename -dir '$WORK/tables-orphans'"
		icewright_cfg "$WORK/cfg-orphans" "$T" "  orphan_files {}" 'table "local.bench.orphans"'
		echo "== orphans: $REFERENCED referenced, $ORPHANS orphans ($P)"
		expect --no-rows
		for i in $(seq 1 "$RUNS"); do
			pair orphans "$i" --no-rows -- "$ICEWRIGHT" -chdir="$WORK/cfg-orphans" apply -auto-approve -no-color \
				-- "$ZAMBONI" remove-orphans bench.orphans --local-warehouse "$T" --yes
		done
		;;
	cluster)
		# Issue 33 item 4: after sort (the table's order (x, y)) and z-order
		# on (x, y) at a target of about 128 files, what a range filter on x,
		# on y and on both lets a reader skip (bench/zamboni/cluster.py).
		# One run per tool and strategy, each verified; not timed.
		pristine "events-$COMMITS-$ROWS-sorted" bash -c "'$WORK/compactbench' setup -dir '$WORK/tables-events' -commits $COMMITS -rows $ROWS -sorted && '$WORK/zambench' rename -dir '$WORK/tables-events'"
		CTARGET=${CTARGET:-204800}
		echo "== cluster: $COMMITS x $ROWS rows, target $CTARGET bytes ($P)"
		# Zamboni's z-order takes its target from the table configuration,
		# not from --target-file-size-bytes.
		echo '{"version": 2, "warehouse": "local", "namespaces": {"bench": {"tables": {"events": {"target_file_size_bytes": '"$CTARGET"', "ordering": {"mode": "zorder", "zorder": {"columns": ["x", "y"]}}}}}}}' >"$WORK/zorder-cluster.json"
		expect
		for s in sort zorder; do
			body="  target_file_size = $CTARGET
  compaction {
    strategy = \"$s\""
			ZARGS=(--sort-by-table-order)
			if [[ $s == zorder ]]; then
				body+="
    zorder_columns = [\"x\", \"y\"]"
				ZARGS=(--table-config "$WORK/zorder-cluster.json")
			fi
			body+="
  }"
			icewright_cfg "$WORK/cfg-cluster-$s" "$T" "$body" 'table "local.bench.events"'
			for who in icewright zamboni; do
				restore
				if [[ $who == icewright ]]; then
					env NO_COLOR=1 "$ICEWRIGHT" -chdir="$WORK/cfg-cluster-$s" apply -auto-approve -no-color >"$WORK/stdout"
					grep -q 'Apply complete' "$WORK/stdout" || { echo "icewright did not apply:" >&2; cat "$WORK/stdout" >&2; exit 1; }
				else
					env -C "$ZRUN" "$ZAMBONI" compact bench.events --local-warehouse "$T" --target-file-size-bytes "$CTARGET" "${ZARGS[@]}" --yes >"$WORK/stdout"
				fi
				verify "$who (cluster $s)"
				echo "  cluster $s $who $("$PY" "$ROOT/bench/zamboni/cluster.py" "$T")"
			done
		done
		;;
	*)
		echo "unknown case $case" >&2
		exit 2
		;;
	esac
done

echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f / %.2f / %.2f", a[1], m, a[NR]}'; }
echo "== summary over $RUNS run(s): min / median / max"
echo "| case | tool | wall s | CPU s | peak RSS MiB |"
echo "|---|---|---|---|---|"
for c in $(awk '{print $1}' "$RESULTS" | uniq); do
	for who in icewright zamboni; do
		echo "| $c | $who | $(awk -v c="$c" -v w="$who" '$1==c && $3==w {print $4}' "$RESULTS" | stats) | $(awk -v c="$c" -v w="$who" '$1==c && $3==w {print $6}' "$RESULTS" | stats) | $(awk -v c="$c" -v w="$who" '$1==c && $3==w {print $5/1024}' "$RESULTS" | stats) |"
	done
done
echo "== ratios icewright / Zamboni, per pair: min / median / max"
echo "| case | wall | CPU | peak RSS |"
echo "|---|---|---|---|"
for c in $(awk '{print $1}' "$RESULTS" | uniq); do
	r() { awk -v c="$c" -v k="$1" '$1==c {v[$2" "$3]=$k; n[$2]=1} END {for (i in n) print v[i" icewright"]/v[i" zamboni"]}' "$RESULTS" | stats; }
	echo "| $c | $(r 4) | $(r 6) | $(r 5) |"
done
