package providers

import (
	"github.com/icewright/icewright/diff"
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
