# Shared by the bench/*/run.sh scripts (sourced).

# same_page_cache BIN...: drop each binary from the page cache, so that
# every contender starts with its code read back through its own page
# faults. A binary the Go linker has just written sits in the page cache in
# large folios, and a process mapping it shows 10-30 MiB more file-backed
# RSS than the same binary read back from disk (measured: `icewright --help`
# 76 MiB fresh from `go build`, 65 MiB after eviction; iceberg-go's CLI,
# installed long before, was always in the second state).
same_page_cache() {
	sync
	local b
	for b in "$@"; do
		dd if="$b" iflag=nocache count=0 status=none
	done
}

# plan_config PLANBENCH DIR TABLE: writes DIR/cfg/bench.icewright.hcl for
# default.bench.TABLE with bench/plan's policy (benchlake.Policy:
# compaction, retention, orphans), as PLANBENCH (the planbench binary)
# prints it.
plan_config() {
	mkdir -p "$2/cfg"
	"$1" config -dir "$2" -table "$3" >"$2/cfg/bench.icewright.hcl"
}

# orphans_config DIR: writes DIR/cfg/bench.icewright.hcl for default.bench.orphans
# with bench/orphans' orphan-only policy.
orphans_config() {
	mkdir -p "$1/cfg"
	cat >"$1/cfg/bench.icewright.hcl" <<HCL
catalog "default" {
  type      = "sql"
  uri       = "sqlite:$1/catalog.db"
  warehouse = "file://$1/warehouse"
}

policy "orphans" {
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.5
  }
}

table "default.bench.orphans" {
  policy = policy.orphans
}
HCL
}

# compaction_config CFG TABLE TARGET STRATEGY CONC: writes
# CFG/bench.icewright.hcl for bench/compaction's table in TABLE with its
# compaction-only policy (TARGET bytes, STRATEGY, CONC groups at once).
compaction_config() {
	mkdir -p "$1"
	cat >"$1/bench.icewright.hcl" <<HCL
catalog "default" {
  type      = "sql"
  uri       = "sqlite:$2/catalog.db"
  warehouse = "$2/warehouse"
}

policy "compact" {
  target_file_size = "${3}B"
  compaction {
    strategy              = "$4"
    max_concurrent_groups = $5
  }
}

table "default.bench.events" {
  policy = policy.compact
}
HCL
}

# rest_catalog_hcl NAME URI prints the catalog block of the REST catalog of
# scripts/services.sh (ICEWRIGHT_TEST_REST_*, as `scripts/services.sh env`
# exports them) labelled NAME and reached at URI (the server's, or a delay
# proxy's in front of it).
rest_catalog_hcl() {
	cat <<HCL
catalog "$1" {
  type      = "rest"
  uri       = "$2"
  warehouse = "$ICEWRIGHT_TEST_REST_WAREHOUSE"
  properties = {
    "credential"           = "$ICEWRIGHT_TEST_REST_ACCESS_KEY:$ICEWRIGHT_TEST_REST_SECRET_KEY"
    "s3.endpoint"          = "$ICEWRIGHT_TEST_REST_S3_ENDPOINT"
    "s3.region"            = "us-east-1"
    "s3.access-key-id"     = "$ICEWRIGHT_TEST_REST_ACCESS_KEY"
    "s3.secret-access-key" = "$ICEWRIGHT_TEST_REST_SECRET_KEY"
  }
}
HCL
}
