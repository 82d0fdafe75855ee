package apply

// Phases of an Event.
const (
	PhaseObserve  = "observe"   // plan: a table is being observed
	PhasePlanned  = "planned"   // plan: a table's plan is ready (or failed: Err)
	PhaseStart    = "start"     // apply: an action starts
	PhaseProgress = "progress"  // apply: Done of Total Unit
	PhaseRetry    = "retry"     // apply: a commit conflicted; the table is re-planned
	PhaseLockWait = "lock_wait" // apply: another run holds the table's lease (Err names it); waiting
	PhaseDone     = "done"      // apply: an action finished
	PhaseSkipped  = "skipped"   // apply: an action was skipped (Err says why)
	PhaseFailed   = "failed"    // apply: an action failed (Err)
	// PhaseFinished: apply is done with a table (Err when it failed);
	// Total is the number of tables with actions, Unit "tables".
	PhaseFinished = "finished"
)

// Event is one progress report. The CLI renders a live line per table on a
// terminal and a log line per event otherwise. Hooks are called from many
// goroutines at once; the CLI's renderer serialises them.
type Event struct {
	Table  string
	Action string // diff.ActionType, "" for table-level events
	Phase  string
	Done   int64
	Total  int64
	Unit   string // "bytes", "files", "tables" (observe and finished: Total tables)
	Err    error
}

func emit(fn func(Event), e Event) {
	if fn != nil {
		fn(e)
	}
}
