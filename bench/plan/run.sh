#!/usr/bin/env bash
# Plan benchmark (issue 3, part 8).
#
#   bench/plan/run.sh [RUNS]
#
# 1. bench.events: 200 appends of 1,000 rows over 4 day partitions (800
#    small Parquet files), history over ~9 days, 20 old and 5 young stray
#    files. In the same run, hyperfine times `icewright plan` (built binary;
#    policy with compaction, retention and orphans) against iceberg-go
#    v0.7.0's `iceberg compact analyze`, `iceberg expire-snapshots --dry-run`
#    and `iceberg clean-orphan-files --dry-run` on the same table, each alone
#    and the three in sequence, and prints icewright / sum.
# 2. Peak RSS (/usr/bin/time -v) of the same commands, and of `icewright plan`
#    on bench.wide: 100,000 data files committed with AddDataFiles in 100
#    snapshots (empty files on disk, never read).
#
# Tables are cached under $CACHE (default ~/.cache/icewright-bench/plan) and
# rebuilt when older than a day (their ages are relative to when they were
# made). Env: REV (build icewright from this commit), RUNS (or $1, default
# 10), CACHE, WORK (scratch, default
# /tmp/icewright-plan-bench), ICEBERG (the CLI), COMMITS/ROWS/FILES (sizes).
set -euo pipefail

RUNS=${1:-${RUNS:-10}}
COMMITS=${COMMITS:-200}
ROWS=${ROWS:-1000}
FILES=${FILES:-100000}
CACHE=${CACHE:-$HOME/.cache/icewright-bench/plan}
WORK=${WORK:-/tmp/icewright-plan-bench}
BIN=$HOME/.cache/icewright-ci/bin
ICEBERG=${ICEBERG:-$BIN/iceberg}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if [[ ! -x $ICEBERG ]]; then
	mkdir -p "$BIN"
	(cd /tmp && GOBIN=$BIN GOFLAGS=-mod=mod go install github.com/apache/iceberg-go/cmd/iceberg@v0.7.0)
fi
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
(cd "$SRC" && go build -o "$WORK/icewright" ./cmd/icewright && go build -o "$WORK/planbench" ./bench/plan/cmd/planbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/icewright" "$WORK/planbench" "$ICEBERG"
ICEWRIGHT=$WORK/icewright

# table NAME ARGS...: the cached lakehouse directory, built if missing or stale.
table() {
	local dir=$CACHE/$1
	shift
	if [[ ! -f $dir/.done ]] || [[ -n $(find "$dir/.done" -mmin +1440) ]]; then
		rm -rf "$dir"
		echo "building $dir ..." >&2
		local t0=$SECONDS
		"$WORK/planbench" "$@" -dir "$dir" 2>"$WORK/setup.log" || { cat "$WORK/setup.log" >&2; exit 1; }
		cp "$WORK/setup.log" "$dir/setup.log"
		echo "built in $((SECONDS - t0)) s" >&2
		touch "$dir/.done"
	fi
	echo "$dir"
}

EV=$(table "events-${COMMITS}x${ROWS}" setup -commits "$COMMITS" -rows "$ROWS")
plan_config "$WORK/planbench" "$EV" events
WI=$(table "wide-$FILES" wide -files "$FILES" -commits 100)
plan_config "$WORK/planbench" "$WI" wide

ice() { # the CLI on lakehouse $1
	local d=$1
	shift
	"$ICEBERG" --catalog sql --uri "file:$d/catalog.db" --sql-driver sqliteshim --sql-dialect sqlite \
		--warehouse "file://$d/warehouse" "$@"
}
CMD_PLAN="$ICEWRIGHT -chdir=$EV/cfg plan -no-color"
G="$ICEBERG --catalog sql --uri file:$EV/catalog.db --sql-driver sqliteshim --sql-dialect sqlite --warehouse file://$EV/warehouse"
CMD_COMPACT="$G compact analyze --target-file-size 134217728 bench.events"
CMD_EXPIRE="$G expire-snapshots --older-than 5d --retain-last 3 --dry-run bench.events"
CMD_ORPHAN="$G clean-orphan-files --older-than 72h --dry-run bench.events"

echo "== machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== what each side finds on bench.events"
echo "icewright plan: $($CMD_PLAN 2>/dev/null | grep -E '^ +[»-] ' | sed 's/^ *//' | paste -sd';')"
echo "iceberg compact analyze: $(ice "$EV" --output json compact analyze --target-file-size 134217728 bench.events | jq -r '.data' | grep -E 'files scanned|Groups' | tr -s ' ' | paste -sd';')"
echo "iceberg expire-snapshots --dry-run: $(ice "$EV" --output json expire-snapshots --older-than 5d --retain-last 3 --dry-run bench.events | jq -r '.expired_snapshot_count') snapshots"
echo "iceberg clean-orphan-files --dry-run: $(ice "$EV" --output json clean-orphan-files --older-than 72h --dry-run bench.events | jq -r '.orphan_file_count') orphan files"

echo "== wall time, $RUNS runs each (hyperfine)"
hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$WORK/plan.json" \
	-n "icewright plan" "$CMD_PLAN" \
	-n "iceberg compact analyze" "$CMD_COMPACT" \
	-n "iceberg expire-snapshots --dry-run" "$CMD_EXPIRE" \
	-n "iceberg clean-orphan-files --dry-run" "$CMD_ORPHAN" \
	-n "iceberg, the three in sequence" "sh -c '$CMD_COMPACT >/dev/null; $CMD_EXPIRE >/dev/null; $CMD_ORPHAN >/dev/null'" \
	>"$WORK/hyperfine.txt" 2>&1 || { cat "$WORK/hyperfine.txt"; exit 1; }
jq -r '.results[] | "\(.command): median \(.median*1000|round) ms (min \(.min*1000|round), max \(.max*1000|round), mean \(.mean*1000|round) ± \(.stddev*1000|round))"' "$WORK/plan.json"
jq -r '.results as $r |
	($r[1].median + $r[2].median + $r[3].median) as $sum |
	"sum of the three iceberg medians: \($sum*1000|round) ms\n" +
	"icewright plan / sum of medians:     \(($r[0].median/$sum*100|round)/100)\n" +
	"icewright plan / sequence (median):  \(($r[0].median/$r[4].median*100|round)/100)\n" +
	"CPU (user+sys, mean): icewright \(($r[0].user+$r[0].system)*1000|round) ms, sequence \(($r[4].user+$r[4].system)*1000|round) ms, sum \(([$r[1],$r[2],$r[3]] | map(.user+.system) | add)*1000|round) ms; icewright / sequence \((($r[0].user+$r[0].system)/($r[4].user+$r[4].system)*100|round)/100)"' "$WORK/plan.json"

# rss LABEL CMD...: peak RSS over 3 runs (min/median/max MiB) and wall.
rss() {
	local label=$1
	shift
	local out=()
	for _ in 1 2 3; do
		/usr/bin/time -v "$@" >/dev/null 2>"$WORK/time.txt" || { cat "$WORK/time.txt" >&2; exit 1; }
		out+=("$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$WORK/time.txt")")
	done
	mapfile -t s < <(printf '%s\n' "${out[@]}" | sort -n)
	printf '%-40s peak RSS MiB min %s median %s max %s\n' "$label" "${s[0]}" "${s[1]}" "${s[2]}"
}
echo "== peak RSS, 3 runs each"
rss "icewright plan (bench.events)" $CMD_PLAN
rss "iceberg compact analyze" $CMD_COMPACT
rss "iceberg expire-snapshots --dry-run" $CMD_EXPIRE
rss "iceberg clean-orphan-files --dry-run" $CMD_ORPHAN
echo "== bench.wide: $FILES data files"
"$ICEWRIGHT" -chdir="$WI/cfg" plan -no-color 2>/dev/null | grep -E '^\s+[-~»+]|^Plan' || true
rss "icewright plan (bench.wide)" "$ICEWRIGHT" -chdir="$WI/cfg" plan -no-color
hyperfine -N --warmup 1 --runs 3 -n "icewright plan (bench.wide)" "$ICEWRIGHT -chdir=$WI/cfg plan -no-color" 2>&1 | grep -E 'Time|Range'
