#!/usr/bin/env bash
# Compaction benchmark: icewright vs `iceberg compact run` (iceberg-go v0.7.0's
# CLI) on the same table, restored to the same state before every run,
# alternating the tools so machine load hits them alike. icewright runs twice per
# run: as the harness (compactbench run: the engine alone) and as the product
# (`icewright apply -auto-approve` with a compaction-only policy: config, plan,
# observe, apply, with the memory limit the CLI sets).
#
#   bench/compaction/run.sh [RUNS] [COMMITS] [ROWS] [TARGET] [STRATEGY]
#
# Defaults: 5 runs, 200 commits x 1,000 rows, 4 partitions, 8 MiB target,
# binpack. Prints one line per run and min/median/max of wall time, CPU and
# peak RSS (from /usr/bin/time -v) and of the ratios icewright/iceberg, for both
# icewright contenders.
# Env: WORK (scratch dir, default /tmp/icewright-compaction-bench),
#      ICEBERG (the CLI; installed into $HOME/.cache/icewright-ci/bin if absent),
#      ICEWRIGHT_ENV (extra env for both icewright runs, e.g. GOMEMLIMIT=64MiB).
#      CONC (groups rewritten at once by both icewright runs: compactbench -concurrent,
#      the policy's max_concurrent_groups; default 0: the engine's default, one per CPU as memory allows).
set -euo pipefail

RUNS=${1:-5}
COMMITS=${2:-200}
ROWS=${3:-1000}
TARGET=${4:-8388608}
STRATEGY=${5:-binpack}
WORK=${WORK:-/tmp/icewright-compaction-bench}
BIN=${HOME}/.cache/icewright-ci/bin
ICEBERG=${ICEBERG:-$BIN/iceberg}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if [[ ! -x $ICEBERG ]]; then
	mkdir -p "$BIN"
	(cd /tmp && GOBIN=$BIN GOFLAGS=-mod=mod go install github.com/apache/iceberg-go/cmd/iceberg@v0.7.0)
fi
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/compactbench" ./bench/compaction/cmd/compactbench && go build -o "$WORK/icewright" ./cmd/icewright)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/compactbench" "$WORK/icewright" "$ICEBERG"
CB=$WORK/compactbench
ICEWRIGHT=$WORK/icewright

SORTED=""
[[ $STRATEGY == sort ]] && SORTED="-sorted"
TABLE=$WORK/table          # absolute paths in metadata: always this dir
PRISTINE=$WORK/pristine-$COMMITS-$ROWS$SORTED
if [[ ! -d $PRISTINE ]]; then
	rm -rf "$TABLE"
	$CB setup -dir "$TABLE" -commits "$COMMITS" -rows "$ROWS" $SORTED
	cp -a "$TABLE" "$PRISTINE"
fi
restore() { rm -rf "$TABLE" && cp -a "$PRISTINE" "$TABLE"; }
restore
# The product's configuration: the bench table's catalog ("default", sqlite)
# and a policy that only compacts (no retention, orphan or manifest blocks).
# Its target_file_size also sets write.target-file-size-bytes on the table
# (an update_properties commit before the compaction).
CFG=$WORK/config
compaction_config "$CFG" "$TABLE" "$TARGET" "$STRATEGY" "${CONC:-0}"
EXPECT=$($CB check -dir "$TABLE" | sed 's/.*"rows":\([0-9]*\).*"rows_fingerprint":\([0-9]*\).*/\1 \2/')

# measure LABEL CMD...: prints "wall_seconds max_rss_kib cpu_seconds"
measure() {
	local out=$WORK/time.$1
	shift
	/usr/bin/time -v "$@" >"$WORK/stdout" 2>"$out" || { cat "$out" "$WORK/stdout" >&2; exit 1; }
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
	cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$out")
	echo "$wall $rss $cpu"
}

verify() { # the rewrite kept every row
	local got
	got=$($CB check -dir "$TABLE" $SORTED)
	local rows_fp
	rows_fp=$(echo "$got" | sed 's/.*"rows":\([0-9]*\).*"rows_fingerprint":\([0-9]*\).*/\1 \2/')
	[[ $rows_fp == "$EXPECT" ]] || { echo "ROWS CHANGED: $rows_fp vs $EXPECT" >&2; exit 1; }
	echo "$got"
}

echo "load (uptime) at the start: $(uptime)"
results=$WORK/results.txt
: >"$results"
for i in $(seq 1 "$RUNS"); do
	restore
	read -r iw ir ic < <(measure iceberg "$ICEBERG" --catalog sql --uri "file:$TABLE/catalog.db" \
		--sql-driver sqliteshim --sql-dialect sqlite --warehouse "file://$TABLE/warehouse" \
		compact run bench.events --target-file-size "$TARGET")
	icheck=$(verify)
	restore
	read -r ow orss oc < <(measure icewright env ${ICEWRIGHT_ENV:-} "$CB" run -dir "$TABLE" -target "$TARGET" -strategy "$STRATEGY" -concurrent "${CONC:-0}")
	ocheck=$(verify)
	cbout=$(cat "$WORK/stdout")
	restore
	read -r aw arss ac < <(measure apply env ${ICEWRIGHT_ENV:-} NO_COLOR=1 "$ICEWRIGHT" -chdir="$CFG" apply -auto-approve)
	grep -q 'compact .*done' "$WORK/stdout" || { echo "icewright apply did not compact:" >&2; cat "$WORK/stdout" >&2; exit 1; }
	acheck=$(verify)
	echo "run $i: iceberg ${iw}s ${ir}KiB cpu ${ic}s | compactbench ${ow}s ${orss}KiB cpu ${oc}s | icewright apply ${aw}s ${arss}KiB cpu ${ac}s"
	echo "  iceberg:      $icheck"
	echo "  compactbench: $ocheck $cbout"
	echo "  icewright apply: $acheck"
	ib=$(echo "$icheck" | sed -n 's/.*"max_order_breaks":\([0-9]*\).*/\1/p')
	ob=$(echo "$ocheck" | sed -n 's/.*"max_order_breaks":\([0-9]*\).*/\1/p')
	ab=$(echo "$acheck" | sed -n 's/.*"max_order_breaks":\([0-9]*\).*/\1/p')
	inmb=$(echo "$cbout" | sed -n 's/.*"input_bytes":\([0-9]*\).*/\1/p' | awk '{print $1/1048576}')
	echo "$iw $ir $ow $orss ${ib:-0} ${ob:-0} ${inmb:-0} $ic $oc $aw $arss $ac ${ab:-0}" >>"$results"
done

stats() { # column -> min median max
	sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f / %.3f / %.3f", a[1], m, a[NR]}'
}
echo "strategy=$STRATEGY commits=$COMMITS rows=$ROWS target=$TARGET runs=$RUNS (min / median / max)"
echo "load (uptime) at the end: $(uptime)"
echo "iceberg wall s:      $(awk '{print $1}' "$results" | stats)"
echo "iceberg cpu s (user+sys): $(awk '{print $8}' "$results" | stats)"
echo "iceberg peak RSS MiB: $(awk '{print $2/1024}' "$results" | stats)"
echo "input MiB/s (input bytes / wall) iceberg: $(awk '{print $7/$1}' "$results" | stats)"
if [[ $STRATEGY == sort ]]; then
	echo "max order breaks in one file, iceberg: $(awk '{print $5}' "$results" | stats)"
fi
# contender NAME WALLCOL RSSCOL CPUCOL BREAKSCOL: its figures and ratios
contender() {
	echo "-- $1"
	echo "  wall s:      $(awk -v c="$2" '{print $c}' "$results" | stats)"
	echo "  cpu s (user+sys): $(awk -v c="$4" '{print $c}' "$results" | stats)"
	echo "  peak RSS MiB: $(awk -v c="$3" '{print $c/1024}' "$results" | stats)"
	echo "  wall ratio /iceberg: $(awk -v c="$2" '{print $c/$1}' "$results" | stats)"
	echo "  cpu ratio  /iceberg: $(awk -v c="$4" '{print $c/$8}' "$results" | stats)"
	echo "  RSS ratio  /iceberg: $(awk -v c="$3" '{print $c/$2}' "$results" | stats)"
	echo "  input MiB/s (input bytes / wall): $(awk -v c="$2" '{print $7/$c}' "$results" | stats)"
	if [[ $STRATEGY == sort ]]; then
		echo "  max order breaks in one file: $(awk -v c="$5" '{print $c}' "$results" | stats)"
	fi
}
contender "icewright engine (compactbench run)" 3 4 9 6
contender "icewright apply -auto-approve (the product)" 10 11 12 13
