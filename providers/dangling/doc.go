// Package dangling is the home of the remove_dangling_deletes action kind
// (diff/dangling.go decides it): Kind, whose observation is what
// compaction.FindDangling finds in the current snapshot (delete files that
// apply to no live data file) as diff.DanglingDeletes, and whose executor
// (Remove) commits one replace snapshot without them through
// compaction.RemoveDangling, held by the commit check to exactly that
// change. The rule that finds them stays in providers/compaction: the
// compaction engine retires dangling deletes of the partitions it rewrites
// by the same rule, and the engine imports nothing of ours above it.
package dangling
