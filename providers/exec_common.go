package providers

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/internal/reach"
)

// ErrConflict marks a commit that definitely did not land because the table
// moved underneath it (a concurrent writer committed, or a requirement such
// as AssertRefSnapshotID failed). Nothing was committed; the caller may
// re-plan and retry.
var ErrConflict = errors.New("commit conflict: the table changed concurrently")

// ErrCommitUnknown marks a commit whose outcome is not known (the catalog
// may or may not have accepted it: timeout, cancelled context, I/O error
// after the request left). Files the commit staged are kept, because one of
// them may now be live.
var ErrCommitUnknown = errors.New("commit outcome unknown")

// ErrRefused marks an action that the safety rules refused before changing
// anything (gc.enabled=false, a path outside the table, ...).
var ErrRefused = errors.New("refused")

// ExecProgress is called while an action runs: done of total in unit
// ("bytes", "files", "snapshots"). It may be nil.
type ExecProgress func(done, total int64, unit string)

func (p ExecProgress) report(done, total int64, unit string) {
	if p != nil {
		p(done, total, unit)
	}
}

// ExecResult is what one executed action did. Zero values mean "nothing".
type ExecResult struct {
	// Committed is true when a new metadata version was committed.
	Committed        bool
	MetadataLocation string // after the action (unchanged when not committed)
	NoOp             bool   // nothing had to be done (already in policy)
	Note             string // why it was a no-op, or what was skipped

	FilesBefore, FilesAfter int64 // live data files (compact) or manifests (rewrite_manifests)
	BytesBefore, BytesAfter int64
	RowsBefore, RowsAfter   int64 // rows checked by compaction

	SnapshotsExpired int
	RefsRemoved      int
	FilesDeleted     int64
	FilesQuarantined int64 // orphans moved to the quarantine instead
	// FilesNotMoved are quarantine moves that failed with the file still
	// only in place; FilesInBothPlaces failed after the quarantined copy
	// was written (the original could not be removed). Each is also in
	// DeleteErrors.
	FilesNotMoved     int64
	FilesInBothPlaces int64
	BytesFreed        int64
	// DeleteErrors are deletions, quarantine moves and manifest writes that
	// failed (the rest went on), each naming its file and where it is. The
	// files are unreferenced: a later orphan sweep can remove them. Any of
	// them fails the action (apply).
	DeleteErrors []string
	// FilesLeft counts released files not deleted because the deletions
	// were stopped (a second interrupt, or their time bound). They are
	// unreferenced: a later orphan sweep removes them.
	FilesLeft int64
	// Skipped are planned paths not deleted, with the reason.
	Skipped []string

	// StagedRemoved counts files a definitely failed commit had written and
	// that were removed again; StagedKept lists files kept because the commit
	// outcome is unknown.
	StagedRemoved int
	StagedKept    []string
}

// execClassifyCommitErr sorts an iceberg-go commit error into ErrConflict (safe
// to retry, nothing landed) or ErrCommitUnknown. iceberg-go reports a lost
// compare-and-swap as ErrCommitFailed, but a failed requirement (the SQL
// catalog validates them before writing anything) as a plain error starting
// with "requirement failed", so the text is matched too.
func execClassifyCommitErr(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if errors.Is(err, table.ErrCommitFailed) || errors.Is(err, table.ErrCommitDiverged) ||
		strings.Contains(msg, "requirement failed") {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
}

// execPinRefs asserts, on a transaction, that main has not moved since tbl was
// loaded. With an explicit assertion iceberg-go fails the commit instead of
// silently refreshing and replaying it onto a newer head: iceops re-plans
// instead, so it never commits something the plan did not consider.
func execPinRefs(txn *table.Transaction) error {
	if err := txn.AssertRefSnapshotID(table.MainBranch); err != nil {
		return fmt.Errorf("assert main unchanged: %w", err)
	}
	return nil
}

// execRefRequirements asserts that every ref of meta still points where it
// did, and that the table is the same table: used for commits iceops sends
// to the catalog directly.
func execRefRequirements(meta table.Metadata) []table.Requirement {
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID())}
	for name, ref := range meta.Refs() {
		id := ref.SnapshotID
		reqs = append(reqs, table.AssertRefSnapshotID(name, &id))
	}
	if _, ok := execRefMap(meta)[table.MainBranch]; !ok {
		// main absent: assert it stays absent.
		reqs = append(reqs, table.AssertRefSnapshotID(table.MainBranch, nil))
	}
	return reqs
}

func execRefMap(meta table.Metadata) map[string]table.SnapshotRef {
	out := map[string]table.SnapshotRef{}
	for name, ref := range meta.Refs() {
		out[name] = ref
	}
	return out
}

// execStagedFiles lists the files a staged (not yet committed) transaction wrote
// for snapshots that base does not have: their manifest lists, the manifests
// they added, and the data/delete files those manifests added. These are the
// files to remove when the commit definitely failed (iceberg-go leaks them).
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
		case f.Category == reach.CategoryManifest && !isNew(f.Snapshot):
			return reach.SkipEntries // carried over from an older snapshot
		case f.Category == reach.CategoryData || f.Category == reach.CategoryDelete:
			if !f.Added || !isNew(f.Snapshot) {
				return nil
			}
		case f.Category != reach.CategoryManifest:
			return nil // statistics: iceberg-go's transactions write none
		}
		out = append(out, f.Path)
		return nil
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

// execFileRef is one file an executor deletes or moves.
type execFileRef struct {
	path string // as written in the metadata
	size int64  // -1 when the metadata does not say
}

// execNormPath is the key of a path for comparisons between references
// (expiry, compaction, quarantine bookkeeping): diff.NormalizePath, the one
// normaliser (docs/design.md §5.5 rule 8), without a policy's equal_schemes and
// equal_authorities and without a trailing slash. The orphan sweep uses
// the policy's maps (orphanNorm).
func execNormPath(p string) string {
	return strings.TrimSuffix(diff.NormalizePath(p, nil, nil), "/")
}

func execSeqCount[T any](s iter.Seq[T]) int {
	n := 0
	for range s {
		n++
	}
	return n
}
