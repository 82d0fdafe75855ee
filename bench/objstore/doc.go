// Package objstore is the object-store orphan benchmark (issue #30, part
// 3): an orphan sweep on the real S3 server (versitygw) behind a counting
// proxy, iceops against iceberg-go's DeleteOrphanFiles and a bare
// paginated listing, by requests, wall time and peak RSS. See run.sh and
// docs/benchmarks.md.
package objstore
