#!/usr/bin/env bash
# Fleet plan benchmark (issue 28, item 1).
#
#   bench/fleet/run.sh [SIZES]        # default "100 1000 10000"
#
# For each size N: a sqlite catalog of N small tables (8 appends of 100 rows
# over 3 day partitions each, the first half of the history 10 days old;
# copies of one table, bench/fleet/cmd/fleetbench setup), 1,000 to a
# namespace. In the same run, hyperfine times `iceops plan` (policy with
# compaction and retention, every table selected) against the floor
# (`fleetbench floor`: list every namespace once, load every table, read
# every manifest list and distinct manifest, at the same parallelism), and
# prints the ratio and the time per table; /usr/bin/time -v gives the peak
# RSS of both. ORPHANS=1 adds `orphan_files` to the policy (the plan then
# also lists each table's directory, which the floor does not).
#
# Fleets are cached under $CACHE (default ~/.cache/iceops-bench/fleet).
# Env: RUNS (default 5), WARMUP (default 1), PAR (parallelism of both, default 4), CACHE, WORK.
set -euo pipefail

SIZES=${1:-${SIZES:-100 1000 10000}}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
PAR=${PAR:-4}
CACHE=${CACHE:-$HOME/.cache/iceops-bench/fleet}
WORK=${WORK:-/tmp/iceops-fleet-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v hyperfine >/dev/null || apt-get install -y hyperfine >/dev/null
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
mkdir -p "$WORK" "$CACHE"
(cd "$ROOT" && go build -o "$WORK/iceops" ./cmd/iceops && go build -o "$WORK/fleetbench" ./bench/fleet/cmd/fleetbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
same_page_cache "$WORK/iceops" "$WORK/fleetbench"
echo "== iceops $(git -C "$ROOT" rev-parse --short HEAD); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

for n in $SIZES; do
	dir=$CACHE/fleet-$n
	if [[ ! -f $dir/.done ]]; then
		rm -rf "$dir"
		echo "building $n tables in $dir ..." >&2
		"$WORK/fleetbench" setup -dir "$dir" -tables "$n" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
		touch "$dir/.done"
	fi
	mkdir -p "$dir/cfg"
	orphans=""
	if [[ -n ${ORPHANS:-} ]]; then
		orphans=$'\n  orphan_files {\n    older_than = "3d"\n  }'
	fi
	cat >"$dir/cfg/fleet.iceops.hcl" <<HCL
catalog "default" {
  type      = "sql"
  uri       = "sqlite:$dir/catalog.db"
  warehouse = "file://$dir/warehouse"
}

iceops {
  parallelism = $PAR
}

policy "fleet" {
  target_file_size = "128MiB"

  compaction {
    min_input_files = 5
  }

  snapshot_retention {
    max_age       = "5d"
    min_snapshots = 3
  }$orphans
}

tables "default.*.*" {
  policy = policy.fleet
}
HCL
	PLAN="$WORK/iceops -chdir=$dir/cfg plan -no-color"
	FLOOR="$WORK/fleetbench floor -dir $dir -parallelism $PAR"
	echo "== $n tables: $($FLOOR)"
	echo "   iceops plan: $($PLAN 2>/dev/null | tail -1)"
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/fleet-$n.json" \
		-n "iceops plan" "$PLAN" -n "floor" "$FLOOR" >"$WORK/hyperfine.txt" 2>&1 || { cat "$WORK/hyperfine.txt"; exit 1; }
	jq -r --argjson n "$n" '.results as $r |
		($r[] | "   \(.command): median \(.median*1000|round) ms (min \(.min*1000|round), max \(.max*1000|round)), \(.median*1e6/$n|round) µs per table"),
		"   ratio iceops plan / floor (medians): \(($r[0].median/$r[1].median)*100|round/100)"' "$WORK/fleet-$n.json"
	for c in "$PLAN" "$FLOOR"; do
		/usr/bin/time -v $c >/dev/null 2>"$WORK/rss.txt" || true
		echo "   peak RSS of ${c%% -*}: $(awk '/Maximum resident/ {printf "%.0f MiB", $6/1024}' "$WORK/rss.txt")"
	done
done
