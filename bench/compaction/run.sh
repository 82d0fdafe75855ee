#!/usr/bin/env bash
# Compaction benchmark: iceops' engine vs `iceberg compact run` (iceberg-go
# v0.7.0's CLI) on the same table, restored to the same state before every
# run, alternating the two tools so machine load hits both alike.
#
#   bench/compaction/run.sh [RUNS] [COMMITS] [ROWS] [TARGET] [STRATEGY]
#
# Defaults: 5 runs, 200 commits x 1,000 rows, 4 partitions, 8 MiB target,
# binpack. Prints one line per run and min/median/max of wall time and peak
# RSS (from /usr/bin/time -v) and of the ratios iceops/iceberg.
# Env: WORK (scratch dir, default /tmp/iceops-compaction-bench),
#      ICEBERG (the CLI; installed into $HOME/.cache/iceops-ci/bin if absent),
#      ICEOPS_ENV (extra env for the iceops run only, e.g. GOMEMLIMIT=64MiB).
set -euo pipefail

RUNS=${1:-5}
COMMITS=${2:-200}
ROWS=${3:-1000}
TARGET=${4:-8388608}
STRATEGY=${5:-binpack}
WORK=${WORK:-/tmp/iceops-compaction-bench}
BIN=${HOME}/.cache/iceops-ci/bin
ICEBERG=${ICEBERG:-$BIN/iceberg}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if [[ ! -x $ICEBERG ]]; then
	mkdir -p "$BIN"
	(cd /tmp && GOBIN=$BIN GOFLAGS=-mod=mod go install github.com/apache/iceberg-go/cmd/iceberg@v0.7.0)
fi
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/compactbench" ./bench/compaction/cmd/compactbench)
CB=$WORK/compactbench

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

results=$WORK/results.txt
: >"$results"
for i in $(seq 1 "$RUNS"); do
	restore
	read -r iw ir ic < <(measure iceberg "$ICEBERG" --catalog sql --uri "file:$TABLE/catalog.db" \
		--sql-driver sqliteshim --sql-dialect sqlite --warehouse "file://$TABLE/warehouse" \
		compact run bench.events --target-file-size "$TARGET")
	icheck=$(verify)
	restore
	read -r ow orss oc < <(measure iceops env ${ICEOPS_ENV:-} "$CB" run -dir "$TABLE" -target "$TARGET" -strategy "$STRATEGY")
	ocheck=$(verify)
	echo "run $i: iceberg ${iw}s ${ir}KiB cpu ${ic}s | iceops ${ow}s ${orss}KiB cpu ${oc}s"
	echo "  iceberg: $icheck"
	echo "  iceops:  $ocheck $(cat "$WORK/stdout")"
	ib=$(echo "$icheck" | sed -n 's/.*"max_order_breaks":\([0-9]*\).*/\1/p')
	ob=$(echo "$ocheck" | sed -n 's/.*"max_order_breaks":\([0-9]*\).*/\1/p')
	inmb=$(sed -n 's/.*"input_bytes":\([0-9]*\).*/\1/p' "$WORK/stdout" | awk '{print $1/1048576}')
	echo "$iw $ir $ow $orss ${ib:-0} ${ob:-0} ${inmb:-0} $ic $oc" >>"$results"
done

stats() { # column -> min median max
	sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f / %.3f / %.3f", a[1], m, a[NR]}'
}
echo "strategy=$STRATEGY commits=$COMMITS rows=$ROWS target=$TARGET runs=$RUNS (min / median / max)"
echo "iceberg wall s:      $(awk '{print $1}' "$results" | stats)"
echo "iceops  wall s:      $(awk '{print $3}' "$results" | stats)"
echo "iceberg cpu s (user+sys): $(awk '{print $8}' "$results" | stats)"
echo "iceops  cpu s (user+sys): $(awk '{print $9}' "$results" | stats)"
echo "cpu ratio iceops/iceberg: $(awk '{print $9/$8}' "$results" | stats)"
echo "iceberg peak RSS MiB: $(awk '{print $2/1024}' "$results" | stats)"
echo "iceops  peak RSS MiB: $(awk '{print $4/1024}' "$results" | stats)"
echo "wall ratio iceops/iceberg: $(awk '{print $3/$1}' "$results" | stats)"
echo "RSS ratio  iceops/iceberg: $(awk '{print $4/$2}' "$results" | stats)"
echo "input MiB/s (input bytes / wall) iceberg: $(awk '{print $7/$1}' "$results" | stats)"
echo "input MiB/s (input bytes / wall) iceops:  $(awk '{print $7/$3}' "$results" | stats)"
if [[ $STRATEGY == sort ]]; then
	echo "max order breaks in one file, iceberg: $(awk '{print $5}' "$results" | stats)"
	echo "max order breaks in one file, iceops:  $(awk '{print $6}' "$results" | stats)"
fi
