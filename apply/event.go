package apply

import "context"

// Phases of an Event.
const (
	PhaseConnect   = "connect"   // plan: a catalog is asked for its tables (Catalog)
	PhaseConnected = "connected" // plan: it answered (Done tables) or failed (Err)
	PhaseObserve   = "observe"   // plan: a table is being observed
	PhasePlanned   = "planned"   // plan: a table's plan is ready (or failed: Err)
	PhaseStart     = "start"     // apply: an action starts
	PhaseProgress  = "progress"  // apply: Done of Total Unit
	PhaseRetry     = "retry"     // apply: a commit conflicted; the table is re-planned
	PhaseLockWait  = "lock_wait" // apply: another run holds the table's lease (Err names it); waiting
	PhaseDone      = "done"      // apply: an action finished
	PhaseSkipped   = "skipped"   // apply: an action was skipped (Err says why)
	PhaseFailed    = "failed"    // apply: an action failed (Err)
	// PhaseFinished: apply is done with a table (Err when it failed);
	// Total is the number of tables with actions, Unit "tables".
	PhaseFinished = "finished"
)

// Event is one progress report. The CLI renders a live line per table on a
// terminal and a log line per event otherwise. Hooks are called from many
// goroutines at once; the CLI's renderer serialises them.
type Event struct {
	Catalog string // connect and connected
	Table   string
	Action  string // diff.ActionType, "" for table-level events
	Phase   string
	Done    int64
	Total   int64
	Unit    string // "bytes", "files", "tables" (observe and finished: Total tables)
	Err     error
}

func emit(fn func(Event), e Event) {
	if fn != nil {
		fn(e)
	}
}

// listingProgress reports each catalog's listing as a connect and a
// connected event: the first answer of a catalog is where a slow or
// unreachable one shows, so a pipeline log says what icewright waits on.
type listingProgress struct {
	backend
	progress func(Event)
}

func (l listingProgress) ListTables(ctx context.Context, catalog string) ([]string, error) {
	emit(l.progress, Event{Catalog: catalog, Phase: PhaseConnect})
	addrs, err := l.backend.ListTables(ctx, catalog)
	emit(l.progress, Event{Catalog: catalog, Phase: PhaseConnected, Done: int64(len(addrs)), Unit: "tables", Err: err})
	return addrs, err
}
