package orphans

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is remove_orphan_files. Its observation is the scan (Scan), which
// rides the plan's one manifest walk and so runs inside the session's
// observation, with Env; Observe adds nothing after it.
type Kind struct {
	// OtherTables is every table the run can see, as the session lists it
	// (Spec.OtherTables).
	OtherTables func(ctx context.Context) (*Tables, error)
	// Recheck is apply's re-check of the sweep on the table as it is now:
	// the plan's scan and the plan's rules again (Spec.Recheck).
	Recheck func(ctx context.Context, pol *config.Effective, tbl *table.Table, now time.Time) (*diff.OrphansAction, error)
}

var _ kind.Kind = Kind{}

// Types is remove_orphan_files.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.RemoveOrphanFiles} }

// Observe adds nothing: the scan is on the observation's walk.
func (Kind) Observe(context.Context, *kind.Env, *table.Table, *diff.TableState) error { return nil }

// Execute removes (or quarantines) the approved orphans (Remove), each
// re-checked against a fresh listing and the plan's rules.
func (k Kind) Execute(ctx context.Context, env *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	ctx, del, err := env.ForDeleting(ctx)
	if err != nil {
		return nil, store.Result{}, err
	}
	pol, pace := env.Policy, del.Pace
	a, o := req.Actions[0].Orphans, pol.OrphanFiles
	er, err := Remove(ctx, del.Catalog, req.Table, Spec{
		Paths:     a.Paths,
		BatchSize: pace.BatchSize, DeleteConcurrency: pace.Concurrency, Cooldown: pace.Cooldown,
		OlderThan:  time.Duration(a.OlderThanMs) * time.Millisecond,
		Now:        req.Now(),
		Progress:   req.Progress,
		Quarantine: a.Quarantine != "",
		// The plan carries the duration as written ("7d"); it was
		// validated with the configuration.
		QuarantineFor: quarantineFor(a.Quarantine),
		PurgeRuns:     a.PurgeRuns,
		OtherTables:   k.OtherTables,
		Address:       pol.Address,
		// The plan's scope rules, applied again as the plan applied them.
		EqualSchemes: o.EqualSchemes.Value, EqualAuthorities: o.EqualAuthorities.Value,
		AllowStorageRoots: o.AllowStorageRoots.Value,
		StorageProps:      del.Storage,
		Recheck: func(ctx context.Context, tbl *table.Table) (*diff.OrphansAction, error) {
			return k.Recheck(ctx, pol, tbl, req.Now())
		},
	})
	return req.Table, er, err
}

// quarantineFor is the plan's quarantine duration ("7d"); 0 for none.
func quarantineFor(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, _ := config.ParseDuration(s)
	return d
}
