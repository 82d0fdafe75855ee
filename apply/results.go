package apply

import (
	"slices"
	"time"

	"github.com/icewright/icewright/diff"
)

// Statuses of tables and actions in Results.
const (
	StatusDone    = "done"
	StatusSkipped = "skipped"
	StatusFailed  = "failed"
	// StatusInterrupted is an action stopped by a second interrupt (or its
	// time bound after the first), or a table an interrupt ended; not a
	// failure of the table, though the apply still exits 1.
	StatusInterrupted = "interrupted"
	// StatusInPolicy is a table whose plan had nothing to do.
	StatusInPolicy = "in_policy"
)

// ResultsFormatVersion versions the `apply -json` document like the plan's.
// 1.1 adds each action's estimate and actual (docs/plan-format.md); 1.2
// the run's read of other tables' references (OtherTablesReferences).
const ResultsFormatVersion = "1.2"

// Results is what an apply did: the CLI renders it as a table and as
// `apply -json`.
type Results struct {
	FormatVersion    string    `json:"format_version"`
	IcewrightVersion string    `json:"icewright_version"`
	StartedAt        time.Time `json:"started_at"`
	FinishedAt       time.Time `json:"finished_at"`
	SavedPlan        bool      `json:"saved_plan"`
	// RunID identifies this apply; its table leases carry it.
	RunID string `json:"run_id,omitempty"`
	// Interrupted is always in the JSON, so `false` is an answer and not a
	// missing field (docs/plan-format.md, apply -json).
	Interrupted bool          `json:"interrupted"` // ctx cancelled: some work was not started
	Tables      []TableResult `json:"tables"`
	// OtherTablesReferences is the run's read of other tables' references
	// (diff.Summary.OtherTablesReferences): the plan's estimate and what
	// apply counted, apart from the action whose deletion asked first; nil
	// when neither has anything (format 1.2, additive).
	OtherTablesReferences *RunCost      `json:"other_tables_references,omitempty"`
	Summary               ResultSummary `json:"summary"`
}

// RunCost is work that belongs to the run, not to one action: the plan's
// estimate (nil: none) and apply's actual (nil: its storage is not
// metered, or nothing was read), storage work only: its CPU time is in the
// asking action's (docs/cost.md, Known limits).
type RunCost struct {
	Estimate *diff.Usage `json:"estimate,omitempty"`
	Actual   *diff.Usage `json:"actual,omitempty"`
}

// ResultSummary counts Results.
type ResultSummary struct {
	Tables        int `json:"tables"`
	TablesChanged int `json:"tables_changed"`
	TablesFailed  int `json:"tables_failed"`
	// TablesRefused counts tables whose plan refused something
	// (planned_refusals), whatever their status: each makes the apply
	// exit 1.
	TablesRefused      int   `json:"tables_refused"`
	TablesInterrupted  int   `json:"tables_interrupted,omitempty"`
	ActionsDone        int   `json:"actions_done"`
	ActionsSkipped     int   `json:"actions_skipped"`
	ActionsFailed      int   `json:"actions_failed"`
	ActionsInterrupted int   `json:"actions_interrupted,omitempty"`
	FilesDeleted       int64 `json:"files_deleted"`
	BytesFreed         int64 `json:"bytes_freed"`
	Snapshots          int   `json:"snapshots_expired"`
}

// TableResult is one table of the plan.
type TableResult struct {
	Address string `json:"address"`
	Status  string `json:"status"` // done | skipped | failed | interrupted | in_policy
	// Error is Failure's text: why the table failed or was skipped.
	Error string `json:"error,omitempty"`
	// Failure is why the table's apply stopped, as a value (what failed,
	// where, the cause); nil when it did not stop (a failed action alone
	// is in Actions).
	Failure *Failure `json:"-"`
	// Replanned is true when the table had changed since the plan (or a
	// commit conflicted) and its actions were re-planned and intersected
	// with the approved plan.
	Replanned bool `json:"replanned"`
	// Locked: another run held the table's lease past -lock-timeout, and
	// nothing was done.
	Locked           bool           `json:"locked,omitempty"`
	Attempts         int            `json:"attempts"`
	MetadataBefore   string         `json:"metadata_before,omitempty"`
	MetadataAfter    string         `json:"metadata_after,omitempty"`
	Actions          []ActionResult `json:"actions"`
	DurationMs       int64          `json:"duration_ms"`
	PlannedRefusals  []diff.Refusal `json:"planned_refusals,omitempty"`
	AttemptConflicts []string       `json:"attempt_conflicts,omitempty"`
	// Warnings are problems that did not fail the table, such as a lease
	// that could not be released (it then expires on its own).
	Warnings []string `json:"warnings,omitempty"`
}

// ActionResult is one action of one table.
type ActionResult struct {
	Type        diff.ActionType `json:"type"`
	Destructive bool            `json:"destructive"`
	Status      string          `json:"status"`           // done | skipped | failed | interrupted
	Reason      string          `json:"reason,omitempty"` // why skipped, or what a done action left out
	Error       string          `json:"error,omitempty"`
	Committed   bool            `json:"committed"`

	FilesBefore int64 `json:"files_before"`
	FilesAfter  int64 `json:"files_after"`
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
	RowsBefore  int64 `json:"rows_before,omitempty"`
	RowsAfter   int64 `json:"rows_after,omitempty"`

	SnapshotsExpired int   `json:"snapshots_expired"`
	RefsRemoved      int   `json:"refs_removed,omitempty"`
	FilesDeleted     int64 `json:"files_deleted"`
	FilesQuarantined int64 `json:"files_quarantined,omitempty"`
	// FilesNotMoved and FilesInBothPlaces are quarantine moves that failed:
	// the file is still only in place, or in place and in the quarantine.
	FilesNotMoved     int64 `json:"files_not_moved,omitempty"`
	FilesInBothPlaces int64 `json:"files_in_both_places,omitempty"`
	// FilesPlaceUnknown are deletes and moves whose request got no answer
	// (a stalled store): each delete_errors line says what is known.
	FilesPlaceUnknown int64 `json:"files_place_unknown,omitempty"`
	// FilesMoved lists, when a quarantine did not finish, each file that
	// did move ("ORIGINAL -> QUARANTINED"): with DeleteErrors, every file
	// and where it is.
	FilesMoved []string `json:"files_moved,omitempty"`
	BytesFreed int64    `json:"bytes_freed"`

	// NotApplied lists planned items (snapshots, refs, paths) left alone at
	// apply time, each with its reason.
	NotApplied []string `json:"not_applied,omitempty"`
	// DeleteErrors are deletions, quarantine moves and manifest writes that
	// failed, each naming its file; any of them fails the action.
	DeleteErrors []string `json:"delete_errors,omitempty"`
	// FilesLeft counts files an expiry released and did not delete because
	// it was stopped (a second interrupt, its time bound, or its store
	// judged unresponsive); they are
	// unreferenced and left for an orphan sweep.
	FilesLeft int64 `json:"files_left,omitempty"`
	// StagedFilesRemoved counts files a definitely failed commit wrote and
	// apply removed; StagedFilesKept are kept because the outcome of the
	// commit is unknown (one of them may be live).
	StagedFilesRemoved int      `json:"staged_files_removed,omitempty"`
	StagedFilesKept    []string `json:"staged_files_kept,omitempty"`

	// Estimate is the approved plan's estimate of the action
	// (diff.Action.Estimate), copied; nil when the plan had none. Actual
	// is what apply counted while the action ran (docs/cost.md, Actuals):
	// nil when it did not run, or when its table's storage is not counted
	// (GCS, Azure). ActualCPUApproximate: Actual's CPU seconds are the
	// action's share of the process's CPU time among the actions running
	// at once, not a measurement of it alone.
	Estimate             *diff.Usage `json:"estimate,omitempty"`
	Actual               *diff.Usage `json:"actual,omitempty"`
	ActualCPUApproximate bool        `json:"actual_cpu_approximate,omitempty"`

	// Partitions are the outcomes of the partitions a compaction
	// delegated to an engine, one each: a failure is said in its entry
	// (and is the action's Error).
	Partitions []diff.PartitionOutcome `json:"partitions,omitempty"`

	DurationMs int64 `json:"duration_ms"`
}

// Failed reports whether the apply exits 1: any table or action failed
// (HasFailure), or the plan refused something (a table with
// planned_refusals, which is no failure of what ran).
func (r *Results) Failed() bool {
	if r == nil {
		return false
	}
	return r.HasFailure() || slices.ContainsFunc(r.Tables, func(t TableResult) bool { return len(t.PlannedRefusals) > 0 })
}

// HasFailure reports whether any table or action failed.
func (r *Results) HasFailure() bool {
	if r == nil {
		return false
	}
	for _, t := range r.Tables {
		if t.Status == StatusFailed {
			return true
		}
		for _, a := range t.Actions {
			if a.Status == StatusFailed {
				return true
			}
		}
	}
	return false
}

// Refused says what the plan refused on the table ("" when nothing): its
// refusals are no failure of what ran, yet the apply exits 1 on them.
func (t *TableResult) Refused() string {
	if len(t.PlannedRefusals) == 0 {
		return ""
	}
	return "the plan refused actions: " + refusalText(t.PlannedRefusals)
}

// stop records why the table's apply stopped, with its status.
func (t *TableResult) stop(status string, f *Failure) {
	t.Status, t.Failure, t.Error = status, f, f.Error()
}

func (r *Results) summarize() {
	s := ResultSummary{Tables: len(r.Tables)}
	for _, t := range r.Tables {
		changed := false
		switch t.Status {
		case StatusFailed:
			s.TablesFailed++
		case StatusInterrupted:
			s.TablesInterrupted++
		}
		if len(t.PlannedRefusals) > 0 {
			s.TablesRefused++
		}
		for _, a := range t.Actions {
			switch a.Status {
			case StatusDone:
				s.ActionsDone++
			case StatusSkipped:
				s.ActionsSkipped++
			case StatusFailed:
				s.ActionsFailed++
			case StatusInterrupted:
				s.ActionsInterrupted++
			}
			if a.Committed || a.FilesDeleted > 0 || a.FilesQuarantined > 0 {
				changed = true
			}
			s.FilesDeleted += a.FilesDeleted
			s.BytesFreed += a.BytesFreed
			s.Snapshots += a.SnapshotsExpired
		}
		if changed {
			s.TablesChanged++
		}
	}
	r.Summary = s
}
