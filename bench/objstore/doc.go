// Package objstore is the object-store benchmark (issue #30, part 3) on
// the real S3 server (versitygw) behind a counting proxy: an orphan sweep
// (icewright against iceberg-go's DeleteOrphanFiles and a bare paginated
// listing) and an expiry deleting what 20 expired snapshots alone reach
// (icewright against iceberg-go's ExpireSnapshots), by requests, wall time,
// CPU and peak RSS. See run.sh and docs/benchmarks.md.
package objstore
