#!/usr/bin/env bash
# Orphan-scan benchmark (issue 5, part 4).
#
#   bench/orphans/run.sh [RUNS] [SCALES]
#
# For each scale REFERENCED:ORPHANS (default "200000:20000 2000000:200000")
# a table bench.orphans holds REFERENCED data files committed with
# AddDataFiles in 20 snapshots, each an empty file on local disk, plus
# ORPHANS unreferenced empty files 10 days old, 2,000 referenced files per
# partition directory. In the same run, interleaved, RUNS times each:
#   - baseline: list the tree (with sizes and mtimes) + read every manifest
#     once (orphanbench baseline);
#   - icewright:   `icewright plan` (built binary) with an orphan-only policy, which
#     observes the table and runs the providers orphan scan;
#   - iceberg-go: Table.PlanOrphanFiles with the same 3-day age guard
#     (orphanbench iceberg).
# Wall time and peak RSS come from /usr/bin/time -v; the script prints
# min/median/max and the ratios. Tables are cached under $CACHE (default
# ~/.cache/icewright-bench/orphans); building the 2M table takes ~7 minutes.
# Env: REV (build icewright from this commit), WORK (scratch, default /tmp/icewright-orphan-bench), CACHE.
set -euo pipefail

RUNS=${1:-3}
SCALES=${2:-"200000:20000 2000000:200000"}
CACHE=${CACHE:-$HOME/.cache/icewright-bench/orphans}
WORK=${WORK:-/tmp/icewright-orphan-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
mkdir -p "$WORK" "$CACHE"
# REV=<commit> builds from that commit (git archive) instead of the
# working tree, so a run is not disturbed by edits in progress.
SRC=$ROOT
if [[ -n ${REV:-} ]]; then
	SRC=$WORK/src
	rm -rf "$SRC" && mkdir -p "$SRC"
	git -C "$ROOT" archive "$REV" | tar -x -C "$SRC"
fi
echo "== icewright built from ${REV:+commit }$(git -C "$ROOT" rev-parse --short "${REV:-HEAD}")${REV:+}$([[ -z ${REV:-} ]] && echo ' + working tree')"
(cd "$SRC" && go build -o "$WORK/icewright" ./cmd/icewright && go build -o "$WORK/orphanbench" ./bench/orphans/cmd/orphanbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/icewright" "$WORK/orphanbench"
OB=$WORK/orphanbench

# measure LABEL CMD...: appends "LABEL wall_s rss_kib" to $RESULTS.
measure() {
	local label=$1
	shift
	/usr/bin/time -v "$@" >"$WORK/stdout" 2>"$WORK/time.txt" || { cat "$WORK/time.txt" "$WORK/stdout" >&2; exit 1; }
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
	echo "$label $wall $rss" >>"$RESULTS"
	printf '  %-10s %7.2f s %8.1f MiB  %s\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(grep -hE 'orphan files|listed|remove|refus|abort|Plan:|No changes' "$WORK/stdout" | head -2 | tr -s ' ' | paste -sd' ')"
}

# stat LABEL COLUMN: "min median max" of a column for LABEL.
stat() {
	awk -v l="$1" -v c="$2" '$1 == l {print $c}' "$RESULTS" | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[1], a[int((NR+1)/2)], a[NR]}'
}

echo "== machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
SUMMARY=$WORK/summary.txt
: >"$SUMMARY"
for scale in $SCALES; do
	REF=${scale%%:*}
	ORPH=${scale##*:}
	D=$CACHE/t-$REF-$ORPH
	if [[ ! -f $D/.done ]]; then
		rm -rf "$D"
		echo "building $D ..."
		t0=$SECONDS
		"$OB" setup -dir "$D" -referenced "$REF" -orphans "$ORPH" -commits 20 2>"$WORK/setup.log" || { cat "$WORK/setup.log"; exit 1; }
		cp "$WORK/setup.log" "$D/setup.log"
		echo "built in $((SECONDS - t0)) s"
		touch "$D/.done"
	fi
	orphans_config "$D"
	echo "== $REF referenced, $ORPH orphans ($D)"
	"$OB" baseline -dir "$D" >/dev/null # warm the page cache for every contender alike
	RESULTS=$WORK/results-$REF.txt
	: >"$RESULTS"
	for i in $(seq 1 "$RUNS"); do
		echo " run $i"
		measure baseline "$OB" baseline -dir "$D"
		measure icewright "$WORK/icewright" -chdir="$D/cfg" plan -no-color
		measure iceberg-go "$OB" iceberg -dir "$D"
	done
	for l in baseline icewright iceberg-go; do
		read -r w1 w2 w3 < <(stat "$l" 2)
		read -r r1 r2 r3 < <(stat "$l" 3)
		printf '%s %s %s %s %s %s %s %s\n' "$REF" "$l" "$w1" "$w2" "$w3" "$r1" "$r2" "$r3" >>"$SUMMARY"
	done
done

echo "== summary (wall s and peak RSS MiB: min / median / max over $RUNS runs)"
awk '{printf "%8d %-10s wall %6.2f / %6.2f / %6.2f s   RSS %7.1f / %7.1f / %7.1f MiB\n", $1, $2, $3, $4, $5, $6/1024, $7/1024, $8/1024}' "$SUMMARY"
echo "== ratios (medians)"
awk '{w[$1" "$2]=$4; r[$1" "$2]=$7; s[$1]=1}
	END {
		for (k in s) {
			printf "%8d icewright/baseline wall %.2f, RSS %.2f;  icewright/iceberg-go wall %.2f, RSS %.2f\n", k,
				w[k" icewright"]/w[k" baseline"], r[k" icewright"]/r[k" baseline"], w[k" icewright"]/w[k" iceberg-go"], r[k" icewright"]/r[k" iceberg-go"]
		}
	}' "$SUMMARY" | sort -n
awk '{r[$1" "$2]=$7; n[$1]=1} END {
		lo = -1; hi = 0
		for (k in n) { if (lo < 0 || k+0 < lo) lo = k+0; if (k+0 > hi) hi = k+0 }
		if (lo == hi) exit
		printf "growth %d -> %d files (x%.0f): peak RSS icewright x%.2f, baseline x%.2f, iceberg-go x%.2f\n", lo, hi, hi/lo,
			r[hi" icewright"]/r[lo" icewright"], r[hi" baseline"]/r[lo" baseline"], r[hi" iceberg-go"]/r[lo" iceberg-go"]
	}' "$SUMMARY"
