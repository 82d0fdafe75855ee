#!/usr/bin/env bash
# Estimate against actual (issue 45, item 4): `icewright apply -json` on the
# benchmarks' tables, with -parallelism=1 (so each action's CPU time is
# exact), and a table of each action's estimate, actual and their ratio,
# per quantity (docs/benchmarks.md, "Estimates against actuals").
#
#   bench/accuracy.sh [CASE...]      (default: every case)
#
# Cases (small: the machine is shared):
#   compaction  bench/compaction's table (compactbench setup, COMMITS x ROWS,
#               4 partitions), a compaction-only policy (binpack, 8 MiB);
#   sort        the same table, strategy sort;
#   events      bench/plan's bench.events (planbench setup, COMMITS x ROWS:
#               small files over 4 days, history over ~9 days, 20 old stray
#               files) with bench/plan's policy: compaction, expiry, orphans;
#   orphans     bench/orphans' table at REFERENCED:ORPHANS (empty files),
#               its orphan-only policy;
#   demo        `icewright demo`'s lakehouse and configuration (every kind:
#               issue 45 asks the demo's estimates to hold too).
# A row outside the target (issue 45: bytes and requests within ±10% of the
# actual, CPU-seconds within ±50%) is marked "outside".
# Env: WORK (scratch, default /tmp/icewright-accuracy), COMMITS (100), ROWS
# (1000), REFERENCED (20000), ORPHANS (2000).
set -euo pipefail

COMMITS=${COMMITS:-100}
ROWS=${ROWS:-1000}
REFERENCED=${REFERENCED:-20000}
ORPHANS=${ORPHANS:-2000}
WORK=${WORK:-/tmp/icewright-accuracy}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CASES=("$@")
[[ ${#CASES[@]} -eq 0 ]] && CASES=(compaction sort events orphans demo)
want() { [[ " ${CASES[*]} " == *" $1 "* ]]; }

mkdir -p "$WORK"
echo "== icewright built from $(git -C "$ROOT" rev-parse --short HEAD)$([[ -n $(git -C "$ROOT" status --porcelain) ]] && echo ' + working tree')"
(cd "$ROOT" && go build -o "$WORK/icewright" ./cmd/icewright &&
	go build -o "$WORK/compactbench" ./bench/compaction/cmd/compactbench &&
	go build -o "$WORK/planbench" ./bench/plan/cmd/planbench &&
	go build -o "$WORK/orphanbench" ./bench/orphans/cmd/orphanbench)
# shellcheck source=lib.sh
source "$ROOT/bench/lib.sh"
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"


# apply CASE DIR: icewright apply -json on DIR's configuration, its results
# document kept as $WORK/CASE.json.
apply() {
	NO_COLOR=1 "$WORK/icewright" -chdir="$2/cfg" apply -json -auto-approve -parallelism=1 >"$WORK/$1.jsonl"
	tail -n 1 "$WORK/$1.jsonl" >"$WORK/$1.json"
}

for strategy in binpack sort; do
	name=compaction
	[[ $strategy == sort ]] && name=sort
	want "$name" || continue
	d=$WORK/compaction-$strategy
	rm -rf "$d"
	sorted=""
	[[ $strategy == sort ]] && sorted=-sorted
	"$WORK/compactbench" setup -dir "$d" -commits "$COMMITS" -rows "$ROWS" $sorted >/dev/null
	compaction_config "$d/cfg" "$d" 8388608 "$strategy" 0
	apply "$name" "$d"
done

if want events; then
	d=$WORK/events
	rm -rf "$d"
	"$WORK/planbench" setup -commits "$COMMITS" -rows "$ROWS" -dir "$d" 2>/dev/null
	plan_config "$WORK/planbench" "$d" events
	apply events "$d"
fi

if want orphans; then
	d=$WORK/orphans
	rm -rf "$d"
	"$WORK/orphanbench" setup -dir "$d" -referenced "$REFERENCED" -orphans "$ORPHANS" -commits 20 2>/dev/null
	orphans_config "$d"
	apply orphans "$d"
fi

if want demo; then
	# The demo writes its configuration beside its lakehouse: apply runs
	# in the directory itself (apply's -chdir=DIR/cfg is DIR here).
	d=$WORK/demo
	rm -rf "$d"
	"$WORK/icewright" demo "$d/cfg" >/dev/null 2>&1
	apply demo "$d"
fi

# The table: per case and action, each quantity the estimate or the actual
# has, estimate / actual / ratio (estimate over actual).
python3 - "$WORK" "${CASES[@]}" <<'PY'
import json, sys
work, cases = sys.argv[1], sys.argv[2:]
def target(q):
    """The share of the actual an estimate may miss by (issue 45), or None."""
    if q == "cpu_seconds":
        return 0.5
    if q.startswith("bytes_") or q.startswith("requests."):
        return 0.1
    return None
def flat(u):
    out = {}
    for k, v in (u or {}).items():
        if k == "requests":
            for rk, rv in v.items():
                out["requests." + rk] = rv
        else:
            out[k] = v
    return out
def rows(label, kind, est, act, approx=False):
    e, u = flat(est), flat(act)
    for q in sorted(set(e) | set(u)):
        if q in ("peak_memory_bytes", "scan_opens_saved"):
            continue
        ev, uv = e.get(q), u.get(q)
        if not ev and not uv:
            continue
        ratio = f"{ev / uv:.2f}" if ev is not None and uv else "–"
        fmt = lambda v: "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else f"{v:,}")
        note = " (approximate)" if q == "cpu_seconds" and approx else ""
        mark, tol = "", target(q)
        if tol is not None:
            inside = ev is not None and (abs(ev - uv) <= tol * uv if uv else ev == 0)
            mark = "" if inside else "outside"
        print(f"| {label} | {kind} | {q} | {fmt(ev)} | {fmt(uv)}{note} | {ratio} | {mark} |")
print("| case | action | quantity | estimate | actual | estimate / actual | target |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for c in cases:
    res = json.load(open(f"{work}/{c}.json"))
    for t in res["tables"]:
        # A case of several tables (the demo) names the table too.
        label = c if len(res["tables"]) == 1 else f"{c} {t['address'].rsplit('.', 1)[-1]}"
        for a in t["actions"]:
            if a["status"] != "done":
                print(f"| {label} | {a['type']} | status {a['status']} | | | {a.get('error') or a.get('reason','')} | |")
                continue
            rows(label, a["type"], a.get("estimate"), a.get("actual"), a.get("actual_cpu_approximate"))
    # The run's read of other tables' references (results format 1.2): a
    # run-level entry, apart from the action that asked first.
    run = res.get("other_tables_references")
    if run:
        rows(f"{c} (run)", "other tables' references", run.get("estimate"), run.get("actual"))
PY
