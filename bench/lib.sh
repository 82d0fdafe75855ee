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
