package compact

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/engine"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is compact. Its observation is the current snapshot's aggregate
// (Aggregator, on the plan's one walk), and what keeps the rewrite from
// carrying a table's values exactly (Observe).
type Kind struct{}

var _ kind.Kind = Kind{}

// Types is compact.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.Compact} }

// Observe is, when the policy compacts or ages partitions (both rewrite
// through providers/compaction), what the rewrite refuses of the table:
// column types it cannot carry, equality deletes it cannot apply
// (diff.TableState.CompactProblem); the plan says so first.
func (Kind) Observe(ctx context.Context, env *kind.Env, tbl *table.Table, st *diff.TableState) error {
	pol := env.Policy
	if !pol.Compaction.Declared && !pol.PartitionAgeing.Declared {
		return nil
	}
	if st.CompactProblem = compaction.TypesProblem(tbl.Schema()); st.CompactProblem != "" {
		return nil
	}
	var err error
	if st.CompactProblem, err = compaction.EqualityDeleteProblem(ctx, tbl, escapedPath); err != nil {
		return fmt.Errorf("equality deletes: %w", err)
	}
	return nil
}

// Execute rewrites the approved groups (Compact), then runs the partitions
// the plan delegates to compaction.engine, in the plan's order.
func (Kind) Execute(ctx context.Context, env *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	cat, err := env.Catalog(ctx)
	if err != nil {
		return nil, store.Result{}, err
	}
	pol, a := env.Policy, req.Actions[0]
	c := pol.Compaction
	calls := a.Compact.EngineCalls
	var eng engine.Engine
	if len(calls) > 0 {
		// Opened before anything runs: a configuration that lost its
		// engine fails the action before icewright's own groups commit.
		if eng, err = env.Engine(); err != nil {
			return nil, store.Result{}, err
		}
		if eng == nil || eng.Name() != calls[0].Engine {
			return nil, store.Result{}, fmt.Errorf("%w: the plan delegates %s to engine %q, which compaction.engine no longer names", store.ErrRefused, config.CountOf(len(calls), "partition", "partitions"), calls[0].Engine)
		}
	}
	// Rebase: icewright's compaction engine lets iceberg-go rebase its replace
	// commit onto concurrent appends, with the rewrite's conflict
	// validation (a concurrent delete on a replaced file fails it). Without
	// it a table with frequent appends never gets compacted.
	props, err := env.Storage()
	if err != nil {
		return nil, store.Result{}, err
	}
	next, er, err := Compact(ctx, req.Table, CompactSpec{
		Action: a.Compact, StorageProps: props, PartialProgress: c.PartialProgress.Value,
		MaxConcurrent: c.MaxConcurrentGroups.Value, MemoryBudget: c.Memory.Value,
		ManifestTarget: diff.ManifestTarget(pol),
		Catalog:        cat, Rebase: true, Progress: req.Progress, Memory: req.Memory})
	if err != nil || len(calls) == 0 {
		return next, er, err
	}
	if er.NoOp {
		// Every planned group was delegated: icewright's rewrite had nothing.
		er.NoOp, er.Note = true, ""
	}
	run := delegatedRun{engine: eng, cat: cat, sel: diff.SelectionFor(pol), now: req.Clock()}
	return runDelegatedCalls(ctx, next, run, calls, er)
}
