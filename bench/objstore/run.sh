#!/usr/bin/env bash
# Object-store orphan benchmark (issue #30, part 3).
#
#   bench/objstore/run.sh [RUNS] [OBJECTS:ORPHANS]
#
# A table bench.orphans on the shared S3 server (versitygw, scripts/services.sh)
# holds OBJECTS-ORPHANS referenced data objects (empty, committed with AddDataFiles
# in 20 snapshots, 2,000 per partition directory) and ORPHANS unreferenced objects
# (default 100000:20000). Every measured run goes through a counting proxy
# (objstorebench proxy), in the same run, RUNS times each:
#   - bare:    a paginated ListObjectsV2 of the table's location (1,000 keys a page);
#   - icewright:  plan (list + referenced set) and apply (re-check + delete) of an
#              orphan-only policy, in process, with the clock 10 days ahead;
#   - iceberg: iceberg-go v0.7.0 Table.DeleteOrphanFiles on the same table.
# The orphans are written again (not measured) before each deleting run.
# The expiry case (EXPIRY files, default 100000): a table bench.expiry whose
# expired snapshots alone own EXPIRY empty data objects (20 appends, then one
# commit replacing them all with 1,000 others); put back as setup left it
# (not measured) before each contender, and checked after each (expiry-verify:
# one snapshot left, every file it reaches present, every expired file gone):
#   - expiry-icewright:  plan + apply of a snapshot_retention policy (max_age 1d,
#                     min_snapshots 1), in process, with the clock 10 days ahead;
#   - expiry-iceberg: iceberg-go v0.7.0 Transaction.ExpireSnapshots(WithOlderThan(0),
#                     WithRetainLast(1)) + Commit (its post-commit deletion).
# Prints wall time, peak RSS (/usr/bin/time -v) and requests by type.
# Env: WORK (default /tmp/icewright-objstore-bench), PORT (proxy, default 17171),
# CASES (default "orphans expiry"), EXPIRY, SMOKE=1 (one run of each case at a
# few hundred objects: checks that the benchmark works, not how fast).
set -euo pipefail

RUNS=${1:-3}
SCALE=${2:-100000:20000}
EXPIRY=${EXPIRY:-100000}
CASES=${CASES:-orphans expiry}
if [[ -n ${SMOKE:-} ]]; then
	RUNS=1 SCALE=2000:400 EXPIRY=400
fi
WORK=${WORK:-/tmp/icewright-objstore-bench}
PORT=${PORT:-17171}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OBJECTS=${SCALE%%:*}
ORPHANS=${SCALE##*:}
[[ -n ${ICEWRIGHT_TEST_S3_ENDPOINT:-} ]] || { echo 'eval "$(scripts/services.sh env)" first' >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time" >&2; exit 1; }
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/objstorebench" ./bench/objstore/cmd/objstorebench)
OB=$WORK/objstorebench
DIR=$WORK/t$OBJECTS-$ORPHANS
PROXY=http://127.0.0.1:$PORT

"$OB" proxy -listen 127.0.0.1:"$PORT" -upstream "$ICEWRIGHT_TEST_S3_ENDPOINT" &
PROXY_PID=$!
trap 'kill $PROXY_PID 2>/dev/null || true' EXIT
sleep 1
if [[ $CASES == *orphans* && ! -f $DIR/env.json ]]; then
	rm -rf "$DIR"
	echo "== setup: $OBJECTS objects, $ORPHANS orphans"
	"$OB" setup -dir "$DIR" -objects "$OBJECTS" -orphans "$ORPHANS"
fi
EDIR=$WORK/expiry$EXPIRY
if [[ $CASES == *expiry* && ! -f $EDIR/pristine.db ]]; then
	rm -rf "$EDIR"
	echo "== setup: an expiry of $EXPIRY data files"
	"$OB" expiry-setup -dir "$EDIR" -files "$EXPIRY" -kept $((EXPIRY < 10000 ? 10 : 1000)) -per-dir $((EXPIRY < 10000 ? 100 : 2000))
fi
RESULTS=$WORK/results.txt
: >"$RESULTS"

# measure LABEL CMD...: one line "LABEL wall_s rss_kib counts-json cpu_s" in $RESULTS.
measure() {
	local label=$1
	shift
	curl -fsS -XPOST "$PROXY/__reset" >/dev/null
	/usr/bin/time -v "$@" >"$WORK/stdout" 2>"$WORK/time.txt" || { cat "$WORK/time.txt" "$WORK/stdout" >&2; exit 1; }
	local wall rss counts cpu
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$WORK/time.txt")
	counts=$(curl -fsS "$PROXY/__counts")
	echo "$label $wall $rss $counts $cpu" >>"$RESULTS"
	printf '  %-14s %7.2f s %8.1f MiB  %s  cpu %.2f s  %s\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$counts" "$cpu" "$(head -1 "$WORK/stdout")"
}

for r in $(seq "$RUNS"); do
	echo "== run $r"
	if [[ $CASES == *orphans* ]]; then
		"$OB" orphans -dir "$DIR"
		measure bare "$OB" bare -dir "$DIR" -endpoint "$PROXY"
		measure icewright "$OB" icewright -dir "$DIR" -endpoint "$PROXY"
		"$OB" orphans -dir "$DIR"
		measure iceberg "$OB" iceberg -dir "$DIR" -endpoint "$PROXY"
	fi
	if [[ $CASES == *expiry* ]]; then
		for c in icewright iceberg; do
			"$OB" expiry-reset -dir "$EDIR"
			measure expiry-$c "$OB" expiry-$c -dir "$EDIR" -endpoint "$PROXY"
			v=$("$OB" expiry-verify -dir "$EDIR" 2>&1) || { echo "expiry-$c: $v" >&2; exit 1; }
			echo "  $v"
		done
	fi
done

# median of a column for LABEL
med() { awk -v l="$1" -v c="$2" '$1 == l {print $c}' "$RESULTS" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== medians of $RUNS runs (wall s, peak RSS KiB)"
for l in bare icewright iceberg expiry-icewright expiry-iceberg; do
	grep -q "^$l " "$RESULTS" && echo "$l $(med $l 2) $(med $l 3)"
done
true
