#!/usr/bin/env bash
# Fleet plan benchmark (issue 28, item 1).
#
#   bench/fleet/run.sh [SIZES]        # default "100 1000 10000"
#
# For each size N: a sqlite catalog of N small tables (8 appends of 100 rows
# over 3 day partitions each, the first half of the history 10 days old;
# copies of one table, bench/fleet/cmd/fleetbench setup), 1,000 to a
# namespace. In the same run, hyperfine times `icewright plan` (policy with
# compaction and retention, every table selected) against the floor
# (`fleetbench floor`: list every namespace once, load every table, read
# every manifest list and distinct manifest, at the same parallelism), and
# prints the ratio and the time per table; /usr/bin/time -v gives the peak
# RSS of both. ORPHANS=1 adds `orphan_files` to the policy, and the floor
# then walks each table's location too (`floor -list`, file:// locations:
# sqlite and pg fleets), as the sweep lists it.
#
# CATALOG picks the catalog both sides reach the fleet through:
#   sqlite  (default) the fleet's own sqlite SQL catalog;
#   pg      the same tables registered in a PostgreSQL SQL catalog named
#           fleetN (`fleetbench register`; ICEWRIGHT_TEST_PG_DSN, as
#           `scripts/services.sh env` exports it);
#   rest    a fleet built in the REST catalog by real appends
#           (`fleetbench setup-catalog`, namespaces fN_ns0000...;
#           ICEWRIGHT_TEST_REST_*), its files on the REST catalog's object
#           store; no backdated history (retention then expires nothing;
#           the reading is the same).
# DELAY=D (pg, rest) puts `fleetbench delay` between both sides and the
# catalog: every request or query waits D more, as across a network.
#
# BEFORE=REV adds `icewright plan` built from commit REV (git archive) as a
# third contender in the same hyperfine run, interleaved: the before/after
# figures of a change (docs/benchmarks.md, issue 41's orphan_files rows).
#
# Fleets are cached under $CACHE (default ~/.cache/icewright-bench/fleet).
# Env: RUNS (default 5), WARMUP (default 1), PAR (parallelism of both,
# default 4), CACHE, WORK, CATALOG, DELAY.
set -euo pipefail

SIZES=${1:-${SIZES:-100 1000 10000}}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
PAR=${PAR:-4}
CACHE=${CACHE:-$HOME/.cache/icewright-bench/fleet}
WORK=${WORK:-/tmp/icewright-fleet-bench}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v hyperfine >/dev/null || apt-get install -y hyperfine >/dev/null
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
mkdir -p "$WORK" "$CACHE"
(cd "$ROOT" && go build -o "$WORK/icewright" ./cmd/icewright && go build -o "$WORK/fleetbench" ./bench/fleet/cmd/fleetbench)
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"
before_bin=""
if [[ -n ${BEFORE:-} ]]; then
	short=$(git -C "$ROOT" rev-parse --short "$BEFORE")
	before_bin=$WORK/icewright-$short
	if [[ ! -x $before_bin ]]; then
		rm -rf "$WORK/src-$short" && mkdir -p "$WORK/src-$short"
		git -C "$ROOT" archive "$short" | tar -x -C "$WORK/src-$short"
		(cd "$WORK/src-$short" && go build -o "$before_bin" ./cmd/icewright)
	fi
fi
same_page_cache "$WORK/icewright" "$WORK/fleetbench" ${before_bin:+"$before_bin"}
echo "== icewright $(git -C "$ROOT" rev-parse --short HEAD); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

CATALOG=${CATALOG:-sqlite}
case $CATALOG in
sqlite) ;;
pg) : "${ICEWRIGHT_TEST_PG_DSN:?CATALOG=pg needs ICEWRIGHT_TEST_PG_DSN: eval \"\$(scripts/services.sh env)\"}" ;;
rest) : "${ICEWRIGHT_TEST_REST_URI:?CATALOG=rest needs ICEWRIGHT_TEST_REST_*: eval \"\$(scripts/services.sh env)\"}" ;;
*) echo "CATALOG must be sqlite, pg or rest" >&2; exit 2 ;;
esac
proxy_pid=""
trap '[[ -n $proxy_pid ]] && kill $proxy_pid 2>/dev/null; true' EXIT
# through HOSTPORT sets $addr to HOSTPORT, or with DELAY to the address of a
# delay proxy in front of it (not in a command substitution: the proxy must
# be this shell's child, for the trap to stop it).
through() {
	addr=$1
	[[ -z ${DELAY:-} ]] && return
	[[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null
	rm -f "$WORK/proxy.addr"
	"$WORK/fleetbench" delay -upstream "$1" -delay "$DELAY" >"$WORK/proxy.addr" 2>"$WORK/proxy.log" &
	proxy_pid=$!
	for _ in $(seq 100); do [[ -s $WORK/proxy.addr ]] && break; sleep 0.1; done
	addr=$(cat "$WORK/proxy.addr")
}
# hostport URL prints the host:port of an http:// or postgres:// URL.
hostport() { sed -E 's|^[a-z]+://([^@/]*@)?([^/?]+).*|\2|' <<<"$1"; }
# The policy every case plans (its catalog block and selector vary).
policy_hcl() {
	local orphans=""
	if [[ -n ${ORPHANS:-} ]]; then
		orphans=$'\n  orphan_files {\n    older_than = "3d"\n  }'
	fi
	cat <<HCL
icewright {
  parallelism = $PAR
  ignore_warnings = ["IW102"]
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

tables "$1" {
  policy = policy.fleet
}
HCL
}

for n in $SIZES; do
	dir=$CACHE/fleet-$n
	cfg=$WORK/$CATALOG-$n
	mkdir -p "$cfg"
	if [[ $CATALOG != rest && ! -f $dir/.done ]]; then
		rm -rf "$dir"
		echo "building $n tables in $dir ..." >&2
		"$WORK/fleetbench" setup -dir "$dir" -tables "$n" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
		touch "$dir/.done"
	fi
	case $CATALOG in
	sqlite)
		cat >"$cfg/catalog.icewright.hcl" <<HCL
catalog "default" {
  type      = "sql"
  uri       = "sqlite:$dir/catalog.db"
  warehouse = "file://$dir/warehouse"
}
HCL
		selector="default.*.*"
		floor_args=(-dir "$dir")
		;;
	pg)
		through "$(hostport "$ICEWRIGHT_TEST_PG_DSN")"
		pgdsn=$(sed -E "s|^(postgres(ql)?://([^@/]*@)?)[^/?]+|\1$addr|" <<<"$ICEWRIGHT_TEST_PG_DSN")
		cat >"$cfg/catalog.icewright.hcl" <<HCL
catalog "fleet$n" {
  type      = "sql"
  uri       = "$pgdsn"
  warehouse = "file://$dir/warehouse"
}
HCL
		"$WORK/fleetbench" register -dir "$dir" -config "$cfg" 2>&1 | tail -1
		selector="fleet$n.*.*"
		floor_args=(-config "$cfg")
		;;
	rest)
		through "$(hostport "$ICEWRIGHT_TEST_REST_URI")"
		rest_catalog_hcl fleetrest "http://$addr" >"$cfg/catalog.icewright.hcl"
		echo "building (or checking) $n tables in the REST catalog ..." >&2
		"$WORK/fleetbench" setup-catalog -config "$cfg" -prefix "f${n}_" -tables "$n" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
		selector="fleetrest.f${n}_*.*"
		floor_args=(-config "$cfg" -prefix "f${n}_")
		;;
	esac
	# The floor reads the catalog block alone; icewright reads it with the policy.
	mkdir -p "$cfg/plan"
	cp "$cfg/catalog.icewright.hcl" "$cfg/plan/"
	policy_hcl "$selector" >"$cfg/plan/fleet.icewright.hcl"
	PLAN="$WORK/icewright -chdir=$cfg/plan plan -no-color"
	list=""
	[[ -n ${ORPHANS:-} && $CATALOG != rest ]] && list=" -list"
	FLOOR="$WORK/fleetbench floor ${floor_args[*]} -parallelism $PAR$list"
	echo "== $n tables, $CATALOG catalog${DELAY:+, $DELAY added per request}: $($FLOOR)"
	echo "   icewright plan: $($PLAN 2>/dev/null | tail -1)"
	BEFORE_PLAN=${before_bin:+$before_bin -chdir=$cfg/plan plan -no-color}
	before_args=()
	[[ -n $BEFORE_PLAN ]] && before_args=(-n "icewright plan at $BEFORE" "$BEFORE_PLAN")
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/fleet-$CATALOG-$n.json" \
		-n "icewright plan" "$PLAN" -n "floor" "$FLOOR" "${before_args[@]}" >"$WORK/hyperfine.txt" 2>&1 || { cat "$WORK/hyperfine.txt"; exit 1; }
	jq -r --argjson n "$n" '.results as $r |
		($r[] | "   \(.command): median \(.median*1000|round) ms (min \(.min*1000|round), max \(.max*1000|round)), \(.median*1e6/$n|round) µs per table"),
		"   ratio icewright plan / floor (medians): \(($r[0].median/$r[1].median)*100|round/100)",
		(if ($r|length) > 2 then "   ratio \($r[2].command) / floor (medians): \(($r[2].median/$r[1].median)*100|round/100)" else empty end)' "$WORK/fleet-$CATALOG-$n.json"
	for c in "$PLAN" "$FLOOR" ${BEFORE_PLAN:+"$BEFORE_PLAN"}; do
		/usr/bin/time -v $c >/dev/null 2>"$WORK/rss.txt" || true
		echo "   peak RSS of ${c%% -*}: $(awk '/Maximum resident/ {printf "%.0f MiB", $6/1024}' "$WORK/rss.txt")"
	done
done
