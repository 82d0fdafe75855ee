#!/usr/bin/env bash
# Reconcile pass benchmark (issue 44 item 4).
#
#   bench/fleet/reconcile.sh [SIZE]     # default 1000
#
# Copies the cached sqlite fleet of SIZE tables (bench/fleet/run.sh builds
# it; CACHE as there) to WORK (fleetbench copy: paths rewritten, so the
# cache is never written), with a policy under which every table is in
# policy (compaction above 100 input files, the derived property already
# set), and runs `fleetbench reconcile`: the time to learn every table's
# metadata location alone, a full plan of the fleet, and a reconcile pass
# (shadow) after commits to FRACTION of the tables (default 0.01), each as
# wall and CPU time. ORPHANS=1 adds orphan_files (every = "24h"). APPLY=1
# has the reconciler apply (not shadow) under a policy that the appends take
# out of policy (compaction from 9 input files: a fresh copy's tables hold 8
# a partition, an append adds one), and a full plan after the pass checks
# that every table is back in policy (fleetbench reconcile -apply).
# CATALOG=pg registers the copy's tables in PostgreSQL (fleetbench register;
# ICEWRIGHT_TEST_PG_DSN, as `scripts/services.sh env` exports it) and reaches
# them, and commits to them, through that catalog. CATALOG=rest needs no
# sqlite fleet: it builds (once; later runs reuse it) SIZE tables in the
# REST catalog of scripts/services.sh by real appends (fleetbench
# setup-catalog, namespaces rcSIZE_ns0000...; ICEWRIGHT_TEST_REST_*), and
# appends to them through it; the reconciler learns their metadata
# locations from each table's load answer, its metadata not parsed
# (Session.MetadataLocations, catalogs.MetadataLocation).
set -euo pipefail

N=${1:-1000}
PAR=${PAR:-4}
FRACTION=${FRACTION:-0.01}
CACHE=${CACHE:-$HOME/.cache/icewright-bench/fleet}
WORK=${WORK:-/tmp/icewright-reconcile-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CATALOG=${CATALOG:-sqlite}
src=$CACHE/fleet-$N
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/fleetbench" ./bench/fleet/cmd/fleetbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
copy=$WORK/fleet-$N
rm -rf "$copy" "$WORK/cfg-$N"
mkdir -p "$WORK/cfg-$N"
if [[ $CATALOG != rest ]]; then
	[[ -f $src/.done ]] || { echo "no fleet at $src: build it with bench/fleet/run.sh $N" >&2; exit 2; }
	"$WORK/fleetbench" copy -dir "$src" -to "$copy" 2>&1 | tail -1
fi
prefix=""
case $CATALOG in
sqlite)
	catalog_hcl="catalog \"default\" {
  type      = \"sql\"
  uri       = \"sqlite:$copy/catalog.db\"
  warehouse = \"file://$copy/warehouse\"
}"
	selector="default.*.*" ;;
pg)
	: "${ICEWRIGHT_TEST_PG_DSN:?CATALOG=pg needs ICEWRIGHT_TEST_PG_DSN: eval \"\$(scripts/services.sh env)\"}"
	catalog_hcl="catalog \"rcfleet$N\" {
  type      = \"sql\"
  uri       = \"$ICEWRIGHT_TEST_PG_DSN\"
  warehouse = \"file://$copy/warehouse\"
}"
	selector="rcfleet$N.*.*"
	echo "$catalog_hcl" >"$WORK/cfg-$N/catalog.icewright.hcl"
	"$WORK/fleetbench" register -dir "$copy" -config "$WORK/cfg-$N" 2>&1 | tail -1
	rm "$WORK/cfg-$N/catalog.icewright.hcl" ;;
rest)
	: "${ICEWRIGHT_TEST_REST_URI:?CATALOG=rest needs ICEWRIGHT_TEST_REST_*: eval \"\$(scripts/services.sh env)\"}"
	prefix=rc${N}_
	catalog_hcl=$(rest_catalog_hcl fleetrest "$ICEWRIGHT_TEST_REST_URI")
	selector="fleetrest.$prefix*.*"
	echo "$catalog_hcl" >"$WORK/cfg-$N/catalog.icewright.hcl"
	echo "building (or checking) $N tables in the REST catalog ..." >&2
	"$WORK/fleetbench" setup-catalog -config "$WORK/cfg-$N" -prefix "$prefix" -tables "$N" -parallelism "$PAR" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
	rm "$WORK/cfg-$N/catalog.icewright.hcl" ;;
*) echo "CATALOG must be sqlite, pg or rest" >&2; exit 2 ;;
esac
orphans=""
[[ -n ${ORPHANS:-} ]] && orphans=$'\n  orphan_files {\n    older_than = "3d"\n    every      = "24h"\n  }'
min_input_files=100
apply_flag=()
[[ -n ${APPLY:-} ]] && min_input_files=9 && apply_flag=(-apply)
cat >"$WORK/cfg-$N/fleet.icewright.hcl" <<HCL
icewright {
  parallelism = $PAR
}

$catalog_hcl

policy "fleet" {
  target_file_size = "128MiB"

  compaction {
    min_input_files = $min_input_files
  }$orphans
}

tables "$selector" {
  policy = policy.fleet
}
HCL
echo "== icewright $(git -C "$ROOT" rev-parse --short HEAD); $N tables, $CATALOG catalog; machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/fleetbench" reconcile -config "$WORK/cfg-$N" -fraction "$FRACTION" -parallelism "$PAR" -prefix "$prefix" "${apply_flag[@]}"
