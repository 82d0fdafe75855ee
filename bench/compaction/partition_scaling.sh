#!/usr/bin/env bash
# Does icewright's peak RSS follow the partition size? Two tables, one partition
# rewritten as one group (-per-partition):
#   A: 200 commits x 10,000 rows in 4 partitions  (500k rows per partition)
#   B: 200 commits x 25,000 rows in 1 partition   (5M rows: 10x A's partition)
# Each is restored and compacted RUNS times (target 128 MiB) by icewright and,
# for reference, by `iceberg compact run` (its planner packs bins of at most
# the target, so it cannot be asked for one group per partition; B's
# partition is about one target, so it is one group there too). Prints peak
# RSS min/median/max per table and tool and the ratios B/A.
#
#   bench/compaction/partition_scaling.sh [RUNS] [STRATEGY]
set -euo pipefail
RUNS=${1:-3}
STRATEGY=${2:-binpack}
TARGET=134217728
WORK=${WORK:-/tmp/icewright-compaction-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/compactbench" ./bench/compaction/cmd/compactbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/compactbench"
CB=$WORK/compactbench
SORTED=""
[[ $STRATEGY == sort ]] && SORTED="-sorted"

declare -A ROWS=([A]=10000 [B]=25000) PARTS=([A]=4 [B]=1)
for t in A B; do
	dir=$WORK/scale-$t$SORTED
	if [[ ! -d $dir.pristine ]]; then
		rm -rf "$dir"
		$CB setup -dir "$dir" -commits 200 -rows "${ROWS[$t]}" -partitions "${PARTS[$t]}" $SORTED
		cp -a "$dir" "$dir.pristine"
	fi
	: >"$WORK/scale-$t.rss"
	: >"$WORK/scale-$t.iceberg.rss"
	for i in $(seq 1 "$RUNS"); do
		rm -rf "$dir" && cp -a "$dir.pristine" "$dir"
		/usr/bin/time -v "${ICEBERG:-$HOME/.cache/icewright-ci/bin/iceberg}" --catalog sql --uri "file:$dir/catalog.db" \
			--sql-driver sqliteshim --sql-dialect sqlite --warehouse "file://$dir/warehouse" \
			compact run bench.events --target-file-size $TARGET >/dev/null 2>"$WORK/scale.time" || { cat "$WORK/scale.time" >&2; exit 1; }
		awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/scale.time" >>"$WORK/scale-$t.iceberg.rss"
		rm -rf "$dir" && cp -a "$dir.pristine" "$dir"
		/usr/bin/time -v "$CB" run -dir "$dir" -target $TARGET -strategy "$STRATEGY" -per-partition \
			>"$WORK/scale.out" 2>"$WORK/scale.time" || { cat "$WORK/scale.time" >&2; exit 1; }
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/scale.time")
		echo "$t run $i: $(cat "$WORK/scale.out") peak_rss_kib=$rss"
		echo "$rss" >>"$WORK/scale-$t.rss"
	done
done
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f / %.1f / %.1f", a[1], m, a[NR]}'; }
echo "iceberg peak RSS MiB A: $(awk '{print $1/1024}' "$WORK/scale-A.iceberg.rss" | stats)"
echo "iceberg peak RSS MiB B: $(awk '{print $1/1024}' "$WORK/scale-B.iceberg.rss" | stats)"
paste "$WORK/scale-A.iceberg.rss" "$WORK/scale-B.iceberg.rss" | awk '{print $2/$1}' | { echo "iceberg ratio B/A per run: $(stats)"; }
echo "peak RSS MiB A (500k-row partition): $(awk '{print $1/1024}' "$WORK/scale-A.rss" | stats)"
echo "peak RSS MiB B (5M-row partition):   $(awk '{print $1/1024}' "$WORK/scale-B.rss" | stats)"
paste "$WORK/scale-A.rss" "$WORK/scale-B.rss" | awk '{print $2/$1}' | { echo "ratio B/A per run (min / median / max): $(stats)"; }
