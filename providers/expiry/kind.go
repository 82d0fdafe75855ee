package expiry

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is expire_snapshots. Its observation rides the plan's walk (Index)
// or reads the table again (Estimate), when providers fills the plan's
// expiry figures; Observe adds nothing to the state.
type Kind struct {
	// Foreign is the session's answer to "which other table references this
	// file" for the table at address whose location is location
	// (Spec.Foreign).
	Foreign func(ctx context.Context, address, location string) (func(string) string, error)
}

var _ kind.Kind = Kind{}

// Types is expire_snapshots.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.ExpireSnapshots} }

// Observe adds nothing: the estimate is the plan's (providers' Plan).
func (Kind) Observe(context.Context, *kind.Env, *table.Table, *diff.TableState) error { return nil }

// Execute expires the approved snapshots and refs (Expire), re-checking
// the retention rules at the request's clock.
func (k Kind) Execute(ctx context.Context, env *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	ctx, del, err := env.ForDeleting(ctx)
	if err != nil {
		return nil, store.Result{}, err
	}
	pol := env.Policy
	e, rp := req.Actions[0].Expire, pol.SnapshotRetention
	var keep *KeepLive
	if req.Began != nil {
		keep = &KeepLive{Began: req.Began, Own: req.Committed}
	}
	return Expire(ctx, del.Catalog, req.Table, Spec{
		SnapshotIDs: e.SnapshotIDs, RefsToRemove: e.RefsToRemove, Progress: req.Progress, Delete: del.Pace, StorageProps: del.Storage,
		Abort: req.Abort, FinishWithin: req.FinishWithin, KeepLive: keep,
		Foreign: func(ctx context.Context) (func(string) string, error) {
			return k.Foreign(ctx, pol.Address, req.Table.Location())
		},
		Retention: &RetentionCheck{MaxAge: rp.MaxAge.Value, MinSnapshots: rp.MinSnapshots.Value,
			MaxRefAge: rp.MaxRefAge.Value, Now: req.Now()},
	})
}
