package providers

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/ageing"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/dangling"
	"github.com/icewright/icewright/providers/engine"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/kind"
	"github.com/icewright/icewright/providers/manifests"
	"github.com/icewright/icewright/providers/tablemeta"
)

// kinds is the one list of the action kinds' homes (providers/kind), in
// diff's order: each observes what its planner needs and runs its actions.
// A new kind is one line here (docs/design.md §7, Adding an action kind).
func (s *Session) kinds() []kind.Kind {
	return []kind.Kind{
		tablemeta.Kind{},
		dangling.Kind{},
		ageing.Kind{},
		compact.Kind{},
		manifests.Kind{},
		expiry.Kind{Foreign: s.foreignOwner},
		s.orphanKind(),
	}
}

// kindEnv is what a kind receives from the session for pol's table: the
// session's catalog, storage settings, pacing and engine as functions, and
// now as its clock.
func (s *Session) kindEnv(pol *config.Effective, now func() time.Time) *kind.Env {
	name := pol.Catalog
	return &kind.Env{
		Policy:  pol,
		Catalog: func(ctx context.Context) (table.CatalogIO, error) { return s.Catalog(ctx, name) },
		Storage: func() (map[string]string, error) { return s.storageProperties(name) },
		DeletePace: func() (objdel.Settings, error) {
			return s.deleteSettings(name)
		},
		ReadPace: func(ctx context.Context) (context.Context, error) { return s.withReadPace(ctx, name) },
		Engine: func() (engine.Engine, error) {
			e, _, err := s.policyEngine(pol)
			return e, err
		},
		Now: now,
	}
}

// Executor returns the executor of action kind t: this session's, through
// iceberg-go. ok is false for a kind without one (a test enumerates
// diff.Kinds so that none lacks it).
func (s *Session) Executor(t diff.ActionType) (Executor, bool) {
	f, ok := s.executors()[t]
	if !ok {
		return nil, false
	}
	return f, true
}

// executors is each registered kind's executor by action type, on the
// session's handles; properties and the sort order share one, which
// commits them together.
func (s *Session) executors() map[diff.ActionType]ExecutorFunc {
	out := map[diff.ActionType]ExecutorFunc{}
	for _, k := range s.kinds() {
		run := func(ctx context.Context, req ExecRequest) (*Table, ExecResult, error) {
			kr := kind.Request{Table: req.Table.t, Actions: req.Actions, Progress: req.Progress, Now: req.Now,
				Abort: req.Abort, FinishWithin: req.FinishWithin, Memory: req.Memory, Committed: req.Committed}
			if req.Began != nil {
				kr.Began = req.Began.t
			}
			next, er, err := k.Execute(ctx, s.kindEnv(req.Policy, s.now), kr)
			return req.Table.with(next), er, err
		}
		for _, t := range k.Types() {
			out[t] = run
		}
	}
	return out
}

// observeKinds lets every kind add what its planner needs to st, in the
// list's order, at the observation's clock now.
func (s *Session) observeKinds(ctx context.Context, pol *config.Effective, tbl *table.Table, st *diff.TableState, now time.Time) error {
	env := s.kindEnv(pol, func() time.Time { return now })
	for _, k := range s.kinds() {
		if err := k.Observe(ctx, env, tbl, st); err != nil {
			return err
		}
	}
	return nil
}
