// Package compaction is icewright's data-file rewrite engine: it reads the live
// rows of a group of data files (deletes applied by iceberg-go's scanner),
// writes them back as Parquet files rolled at the target size, optionally
// totally ordered (sort) or clustered (zorder), checks that no row was lost,
// and commits a `replace` snapshot through iceberg-go's RewriteFiles, which
// validates conflicts with concurrent writers.
//
// It exists because iceberg-go v0.7.0's RewriteDataFiles sorts each Arrow
// batch rather than each file, records no sort_order_id, and buffers in
// proportion to the group. Here a group streams through a bounded external
// merge sort (sorted runs spilled to Arrow IPC files, then a k-way merge).
// On format v3 tables every row keeps its _row_id and
// _last_updated_sequence_number; a group whose files lack first_row_id is
// refused rather than rewritten without lineage.
//
// Flow: Resolve (approved.go) turns the groups a plan approved (their
// files, as diff's planner named them) into scan tasks with the deletes
// that apply today, skipping a group the table no longer matches;
// PlanPartitions/PlanGroups (plan.go) choose groups exactly as iceberg-go's
// compaction.Config does, for the benchmark tool and the tests that hold
// diff's planner to iceberg-go's; Run (run.go) rewrites each group (read via iceberg-go's scanner,
// keys.go/sorter.go/zorder.go order the rows, writer.go writes Parquet and
// builds DataFiles from the footers; columns.go encodes a flat schema's
// columns in parallel, byte for byte as pqarrow would) and commits
// (commit.go). where.go
// parses a policy's `where` (ParseWhere) and decides from a file's
// partition alone whether it is in scope (WhereFilter); the plan's
// observation in providers uses the same WhereFilter, so a plan counts the
// partitions the rewrite plans.
// ProcessMemoryLimit is the Go soft memory limit a process running one
// compaction should set; MemoryLimiter (memlimit.go) keeps it sized for the
// compactions running at once, through a setter only main hands over.
//
// It may import iceberg-go, arrow-go, the standard library and diff (the
// memory rule the plan's estimate shares: diff/compactmem.go). It never
// prints; progress goes through Options.Progress.
package compaction
