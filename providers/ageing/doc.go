// Package ageing is the home of the age_partitions action kind
// (diff/ageing.go decides it from diff.PartitionAgeing): Kind, whose
// observation asks compaction.PlanAgeing what a partition_ageing rule
// would do to the table at the plan's clock (or why it cannot), and whose
// executor (Age) runs the approved action by its own rule and cutoff
// through compaction.RunAgeing, one commit that adds the coarser spec and
// rewrites the aged partitions into it. Planning and running the rewrite
// stay in providers/compaction: they are the compaction engine's grouping
// and commit with a target spec (its Group.Target, its commit's added
// spec), and the engine imports nothing of ours above it.
package ageing
