package apply

import (
	"errors"
	"fmt"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// Stage is where in a table's apply a Failure happened.
type Stage string

// Stages of a table's apply, in the order they come.
const (
	// StageNotPlanned: the plan could not plan the table (Err is the
	// plan's message).
	StageNotPlanned Stage = "not-planned"
	// StageRefused: the plan refused actions on a table with nothing else
	// to do (Err lists the refusals).
	StageRefused Stage = "refused"
	// StageQueued: an interrupt came before the table started.
	StageQueued Stage = "queued"
	// StageConfig: the configuration no longer manages the table.
	StageConfig Stage = "config"
	// StageLoad: the table could not be loaded from its catalog (before
	// an action when Action is set).
	StageLoad Stage = "load"
	// StageReplan: the table changed since the plan and observing it again
	// failed.
	StageReplan Stage = "re-plan"
	// StageLease: the table's lease could not be taken, or (Action set)
	// was lost before the action started.
	StageLease Stage = "lease"
	// StageStart: an interrupt came before the next action started.
	StageStart Stage = "start"
	// StageIdentity: the table was dropped and recreated during apply.
	StageIdentity Stage = "identity"
	// StageRetryWait: an interrupt came while waiting to retry after a
	// commit conflict.
	StageRetryWait Stage = "retry-wait"
	// StageExecute: the action's executor failed (its observation, its
	// work, or its commit check: Conflict says a concurrent writer won
	// after the retries).
	StageExecute Stage = "execute"
)

// Failure is why a table's apply stopped: what failed, at which stage,
// and the cause. Its Error is the text results and views show
// (tables[].error in apply -json).
type Failure struct {
	Action diff.ActionType // "" when no action had started
	Stage  Stage
	Err    error // the cause; nil for StageConfig, StageIdentity
	// Interrupted: an interrupt (or an action's time bound after it)
	// stopped the table, not an error of its own.
	Interrupted bool
	// Retries counts the commit conflicts this table retried before the
	// failure.
	Retries int
}

// Error says what happened, in the words of the results.
func (f *Failure) Error() string {
	switch f.Stage {
	case StageNotPlanned:
		return "not planned: " + f.cause()
	case StageRefused:
		return "the plan refused actions: " + f.cause()
	case StageQueued:
		return "interrupted before start: " + f.cause()
	case StageConfig:
		return "the configuration no longer manages this table"
	case StageLoad:
		if f.Action != "" {
			return fmt.Sprintf("%s: load: %s", f.Action, f.cause())
		}
		return "load: " + f.cause()
	case StageReplan:
		return "re-plan: " + f.cause()
	case StageLease:
		if f.Action != "" {
			return fmt.Sprintf("%s not started: %s", f.Action, f.cause())
		}
		return f.cause()
	case StageStart:
		return "interrupted: no new action starts after the signal"
	case StageIdentity:
		return "the table was dropped and recreated during apply; nothing more is done"
	case StageRetryWait:
		return "interrupted while waiting to retry"
	default: // StageExecute
		return fmt.Sprintf("%s: %s", f.Action, f.cause())
	}
}

func (f *Failure) cause() string {
	if f.Err == nil {
		return ""
	}
	return f.Err.Error()
}

// Unwrap is the cause.
func (f *Failure) Unwrap() error { return f.Err }

// Conflict reports whether a concurrent writer's commit won (after the
// retries, Retries of them).
func (f *Failure) Conflict() bool { return errors.Is(f.Err, providers.ErrConflict) }

// Locked reports whether another run held the table's lease.
func (f *Failure) Locked() bool {
	var locked *providers.LockedError
	return errors.As(f.Err, &locked)
}
