package store

import (
	"errors"

	"github.com/icewright/icewright/diff"
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

// Progress is called while an action runs: done of total in unit
// ("bytes", "files", "snapshots"). It may be nil.
type Progress func(done, total int64, unit string)

// Report calls p when it is set.
func (p Progress) Report(done, total int64, unit string) {
	if p != nil {
		p(done, total, unit)
	}
}

// Result is what one executed action did. Zero values mean "nothing".
type Result struct {
	// Committed is true when a new metadata version was committed.
	Committed bool
	// Snapshots are the snapshots the action committed (a compaction's
	// replace snapshots, a manifest rewrite's), for the same apply's expiry
	// (docs/design.md §5.4: what this apply's own rewrite replaced).
	Snapshots        []int64
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
	// FilesPlaceUnknown are deletes and moves whose request got no answer
	// (a stalled or unresponsive store): the file may be in either place,
	// or both. Each is also in DeleteErrors, saying what is known.
	FilesPlaceUnknown int64
	// Moved lists, when a quarantine did not move every file, each file
	// that did move, as "ORIGINAL -> QUARANTINED": with DeleteErrors it
	// names every file of the action and where it is, even when the run's
	// final manifest could not be written.
	Moved      []string
	BytesFreed int64
	// DeleteErrors are deletions, quarantine moves and manifest writes that
	// failed (the rest went on), each naming its file and where it is. The
	// files are unreferenced: a later orphan sweep can remove them. Any of
	// them fails the action (apply).
	DeleteErrors []string
	// FilesLeft counts released files not deleted because the deletions
	// were stopped (a second interrupt, their time bound, or the store
	// judged unresponsive). They are
	// unreferenced: a later orphan sweep removes them.
	FilesLeft int64
	// Skipped are planned paths not deleted, with the reason.
	Skipped []string

	// StagedRemoved counts files a definitely failed commit had written and
	// that were removed again; StagedKept lists files kept because the commit
	// outcome is unknown.
	StagedRemoved int
	StagedKept    []string

	// Partitions are the outcomes of the partitions the action delegated
	// to an engine, one each, in the plan's order.
	Partitions []diff.PartitionOutcome
}
