#!/usr/bin/env bash
# Configuration size benchmark (issue 43.7): `validate` and `plan` of one
# file of 185,183 one-line table blocks (10.4 MB).
#
#   bench/config/run.sh [ROUNDS]         # default 3
#
# REVS (default "HEAD") are the commits to compare, e.g.
# REVS="5e84041 HEAD": each is built from `git archive` and they run
# interleaved, round by round, so the load of the machine falls on each
# alike. Each round runs, per commit, `validate` of the file and `plan` of
# the same table blocks (every other one with a policy) against a sqlite
# catalog holding the first 20 of those tables (`fleetbench setup`: 8
# snapshots each; the other 185,163 are "does not exist" errors), and
# prints wall, CPU (user+sys) and peak RSS from /usr/bin/time, with the load
# average. Last, the last commit's validate and plan under
# `ulimit -v 4000000` (issue 43's 4 GB address-space limit).
# Env: REVS, WORK (default /tmp/icewright-config-bench).
set -euo pipefail

ROUNDS=${1:-3}
REVS=${REVS:-HEAD}
WORK=${WORK:-/tmp/icewright-config-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
mkdir -p "$WORK"
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"

bins=()
for rev in $REVS; do
	short=$(git -C "$ROOT" rev-parse --short "$rev")
	if [[ ! -x $WORK/icewright-$short ]]; then
		rm -rf "$WORK/src-$short" && mkdir -p "$WORK/src-$short"
		git -C "$ROOT" archive "$short" | tar -x -C "$WORK/src-$short"
		(cd "$WORK/src-$short" && go build -o "$WORK/icewright-$short" ./cmd/icewright)
	fi
	bins+=("$short")
done
(cd "$ROOT" && go build -o "$WORK/fleetbench" ./bench/fleet/cmd/fleetbench)
same_page_cache "${bins[@]/#/$WORK/icewright-}"

# The file of issue 43.7, after a catalog block: validate reads it as is.
mkdir -p "$WORK/validate" "$WORK/plan"
python3 - "$WORK" <<'PY'
import sys
work = sys.argv[1]
with open(work + "/validate/main.icewright.hcl", "w") as f:
    f.write('catalog "lake" {\n  type = "sql"\n  uri = "sqlite:cat.db"\n  warehouse = "wh"\n}\n')
    for i in range(1, 185184):
        f.write('table "lake.ns.t%06d" { target_file_size = "128MiB" }\n' % i)
with open(work + "/plan/main.icewright.hcl", "w") as f:
    f.write('catalog "default" {\n  type = "sql"\n  uri = "sqlite:%s/lake/catalog.db"\n  warehouse = "file://%s/lake/warehouse"\n}\n' % (work, work))
    f.write('policy "fleet" {\n  target_file_size = "128MiB"\n  compaction {\n    min_input_files = 5\n  }\n'
            '  snapshot_retention {\n    max_age = "5d"\n    min_snapshots = 3\n  }\n}\n')
    for i in range(0, 185183):
        if i % 2:
            f.write('table "default.ns0000.t%06d" { target_file_size = "128MiB" }\n' % i)
        else:
            f.write('table "default.ns0000.t%06d" { policy = policy.fleet }\n' % i)
PY
if [[ ! -f $WORK/lake/.done ]]; then
	rm -rf "$WORK/lake"
	"$WORK/fleetbench" setup -dir "$WORK/lake" -tables 20 >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
	touch "$WORK/lake/.done"
fi

echo "== $(nproc) cores; $(wc -c <"$WORK/validate/main.icewright.hcl") bytes, $(grep -c '^table' "$WORK/validate/main.icewright.hcl") table blocks"
printf '%-8s %-8s %5s %9s %9s %10s %s\n' commit command round wall cpu "peak RSS" load
measure() { # measure COMMIT COMMAND ROUND
	local out=$WORK/time.$$
	/usr/bin/time -o "$out" -f '%e %U %S %M' "$WORK/icewright-$1" -chdir="$WORK/$2" "$2" >/dev/null 2>&1 || true
	read -r wall user sys rss < <(tail -1 "$out") # after "Command exited with non-zero status 1"
	printf '%-8s %-8s %5s %8.2fs %8.2fs %6d MiB %s\n' "$1" "$2" "$3" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$(cut -d' ' -f1 /proc/loadavg)"
}
for round in $(seq "$ROUNDS"); do
	for b in "${bins[@]}"; do
		measure "$b" validate "$round"
		measure "$b" plan "$round"
	done
done
last=${bins[-1]}
for cmd in validate plan; do
	rc=0
	(ulimit -v 4000000; "$WORK/icewright-$last" -chdir="$WORK/$cmd" "$cmd" >/dev/null 2>"$WORK/ulimit.err") || rc=$?
	# plan exits 1 here: the 185,163 tables the catalog does not hold.
	echo "$last $cmd under ulimit -v 4000000: exit $rc, $(grep -c 'out of memory' "$WORK/ulimit.err" || true) 'out of memory'"
done
