// Package kind is the seam between the session (providers) and the homes
// of the action kinds below it: Kind, the interface each implements (the
// diff action types it runs, what it adds to a table's observation, its
// executor), Env, what it receives from the session for one table (the
// catalog, storage settings, deletion and read pacing, the engine, the
// clock, as functions), and Request, one execution. providers registers
// every Kind once (providers/kinds.go).
//
// It also holds the executor steps several kinds share (commit.go): how a
// snapshot-adding action starts (RewriteStart, HeadIDRefusal), pinning main
// (PinRefs), finding and removing what a failed commit staged (StagedFiles,
// RemoveStaged, Recording, FailedCommit, RemoveLeaked), classifying a
// commit's error (ClassifyErr) and the totals a result shows
// (SummaryTotals, DeleteFilesOf).
//
// It imports diff, config, providers/compaction, providers/engine and
// providers/internal; no kind and never providers. It never prints.
package kind
