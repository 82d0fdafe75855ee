// Package compact is the home of the compact action kind (diff/compact.go
// decides it and packs its groups):
//   - aggregate.go, histogram.go: its observation, the current snapshot's
//     live files folded per (spec, partition) as the one manifest walk
//     streams them (Aggregator, a reach.Aggregate: candidates by the
//     policy's selection, compaction.where and stale sort order, deletes
//     per data file, sizes in a log-scale histogram), which also counts the
//     files and manifests the other kinds' planners read; ObserveTable and
//     ObserveTableSizes for tools, tests and inspect;
//   - kind.go: Kind (Observe: what the rewrite refuses of the table,
//     diff.TableState.CompactProblem; Execute);
//   - compact.go: Compact, which rewrites exactly the approved groups with
//     providers/compaction, each checked against the table first;
//     PlanCompaction (a plan's compaction of one table, for tools and
//     tests); Inputs (the files a plan's groups replace, for the expiry
//     estimate);
//   - delegated.go: the partitions the plan delegates to compaction.engine,
//     run after icewright's own groups, each engine commit checked before it
//     counts as done.
//
// It imports diff, config, providers/compaction, providers/engine,
// providers/internal, providers/kind, providers/manifests (row ids first),
// providers/tablemeta (sort orders) and providers/tablestate; never
// providers. It never prints.
package compact
