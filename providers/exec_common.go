package providers

import (
	"context"
	"fmt"
	"iter"
	"slices"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// The executors' vocabulary, shared with the domain packages
// (internal/store) and named here for apply.
var (
	// ErrConflict marks a commit that definitely did not land because the
	// table moved underneath it; the caller may re-plan and retry.
	ErrConflict = store.ErrConflict
	// ErrCommitUnknown marks a commit whose outcome is not known; files
	// it staged are kept.
	ErrCommitUnknown = store.ErrCommitUnknown
	// ErrRefused marks an action the safety rules refused before changing
	// anything.
	ErrRefused = store.ErrRefused
)

// ExecProgress is called while an action runs: done of total in unit
// ("bytes", "files", "snapshots"). It may be nil.
type ExecProgress = store.Progress

// ExecResult is what one executed action did (store.Result).
type ExecResult = store.Result

// PartitionOutcome is one delegated partition of an ExecResult.
type PartitionOutcome = diff.PartitionOutcome

// headIDRefusal refuses an executor that adds a snapshot on a main head
// whose id iceberg-go v0.7.0 takes for "no parent" (diff.HeadIDProblem, which
// the plan refuses too): a saved plan applied to such a table stops here.
func headIDRefusal(tbl *table.Table) error {
	// iceberg-go parents a commit on main on the current snapshot.
	var head *int64
	if cur := tbl.CurrentSnapshot(); cur != nil {
		head = &cur.SnapshotID
	}
	if why := diff.HeadIDProblem(head); why != "" {
		return fmt.Errorf("%w: %s", ErrRefused, why)
	}
	return nil
}

// rewriteStart is how every executor that adds a snapshot on main's head
// begins: the result names the metadata it started from, a table without a
// snapshot is nothing to do, and a head iceberg-go would take for "no
// parent" is refused (headIDRefusal). stop says the caller returns res and
// err as they are.
func rewriteStart(tbl *table.Table) (res ExecResult, stop bool, err error) {
	res = ExecResult{MetadataLocation: tbl.MetadataLocation()}
	if tbl.CurrentSnapshot() == nil {
		res.NoOp, res.Note = true, "table has no snapshot"
		return res, true, nil
	}
	return res, false, headIDRefusal(tbl)
}

// execPinRefs asserts, on a transaction, that main has not moved since tbl was
// loaded. With an explicit assertion iceberg-go fails the commit instead of
// silently refreshing and replaying it onto a newer head: icewright re-plans
// instead, so it never commits something the plan did not consider.
func execPinRefs(txn *table.Transaction) error {
	if err := txn.AssertRefSnapshotID(table.MainBranch); err != nil {
		return fmt.Errorf("assert main unchanged: %w", err)
	}
	return nil
}

// execStagedFiles lists the files a staged (not yet committed) transaction wrote
// for snapshots that base does not have: their manifest lists and the
// manifests they added. These are the files to remove when the commit
// definitely failed (iceberg-go leaks them). A manifest rewrite, its one
// user, writes no data or delete file; one that a staged snapshot says it
// added is not icewright' (a producer's bug, which the commit check reports)
// and is never listed for removal.
func execStagedFiles(ctx context.Context, fs iceio.IO, base, staged table.Metadata) ([]string, error) {
	known := map[int64]bool{}
	for _, s := range base.Snapshots() {
		known[s.SnapshotID] = true
	}
	var added []int64
	for _, s := range staged.Snapshots() {
		if !known[s.SnapshotID] {
			added = append(added, s.SnapshotID)
		}
	}
	isNew := func(id int64) bool { return slices.Contains(added, id) }
	var out []string
	err := reach.Walk(ctx, reach.Spec{Meta: staged, FS: fs, Snapshots: added, Consumers: []reach.Consumer{{File: func(f reach.File) error {
		switch {
		case f.Category == reach.CategoryManifestList:
			out = append(out, f.Path)
		case f.Category == reach.CategoryManifest:
			if isNew(f.Snapshot) {
				out = append(out, f.Path)
			} // else carried over from an older snapshot
			return reach.SkipEntries
		}
		return nil // statistics: iceberg-go's transactions write none
	}}}})
	if err != nil {
		return out, fmt.Errorf("read staged files: %w", err)
	}
	return out, nil
}

// execRemoveStaged deletes files a definitely failed commit wrote. Errors are
// collected, not fatal: the files are unreferenced either way.
func execRemoveStaged(fs iceio.IO, paths []string) (removed int, errs []string) {
	for _, p := range paths {
		if err := fs.Remove(p); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		removed++
	}
	return removed, errs
}

func execSeqCount[T any](s iter.Seq[T]) int {
	n := 0
	for range s {
		n++
	}
	return n
}
