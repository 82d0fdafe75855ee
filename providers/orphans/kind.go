package orphans

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is remove_orphan_files. Its observation is the scan (Kind.Scan),
// which rides the plan's one manifest walk and so runs inside the session's
// observation; Observe adds nothing after it.
type Kind struct {
	// Reload loads the table at address again (Env.Reload).
	Reload func(ctx context.Context, address string) (*table.Table, error)
	// OtherTables is every table the run can see, listed afresh: apply's
	// re-check and Remove (Spec.OtherTables).
	OtherTables func(ctx context.Context) (*Tables, error)
	// Metadata is the state the table's metadata gives (the session's
	// providers/tablestate.Metadata), which the re-check plans from.
	Metadata func(tbl *table.Table, address string) *diff.TableState
	// SpillLimit is Env.SpillLimit.
	SpillLimit int
	// Storage is the storage settings of the catalog an address names
	// (Env.Storage): the scan reads them by the table's address, so that
	// a policy made for one table alone (inspect's) needs no catalog name.
	Storage func(address string) (map[string]string, error)
}

// Scan is the orphan scan of env.Policy's table with the storage settings
// of the catalog its address names; ride, when set, rides on its reference walk (the session's
// observation); others is the other tables it checks against: a plan's
// listing, or a fresh one (OtherTables).
func (k Kind) Scan(ctx context.Context, env *kind.Env, tbl *table.Table, ride *Ride, others func(context.Context) (*Tables, error)) (*diff.OrphanScan, error) {
	pol := env.Policy
	storage, err := k.Storage(pol.Address)
	if err != nil {
		return nil, err
	}
	return Scan(ctx, Env{
		Reload:      func(ctx context.Context) (*table.Table, error) { return k.Reload(ctx, pol.Address) },
		Storage:     storage,
		OtherTables: others,
		SpillLimit:  k.SpillLimit,
		Ride:        ride,
	}, pol, tbl)
}

// recheck is apply's re-check of a sweep (Spec.Recheck): the plan's scan
// and the plan's rules, again, on the table as it is now.
func (k Kind) recheck(ctx context.Context, env *kind.Env, tbl *table.Table, now time.Time) (*diff.OrphansAction, error) {
	scan, err := k.Scan(ctx, env, tbl, nil, k.OtherTables)
	if err != nil {
		return nil, fmt.Errorf("orphan scan: %w", err)
	}
	st := k.Metadata(tbl, env.Policy.Address)
	st.Orphans = scan
	act, refusal := diff.RecheckOrphans(env.Policy, st, now)
	if refusal != "" {
		return nil, fmt.Errorf("%w: %s", store.ErrRefused, refusal)
	}
	return act, nil
}

// ForeignOwner is expiry's question at deletion (expiry.Spec.Foreign) over
// ts: which table other than address references a file. When a table that
// could hold files on the storage of location cannot be read, every file
// there is kept, naming it.
func ForeignOwner(ctx context.Context, ts *Tables, address, location string) (func(string) string, error) {
	if err := ts.ReadReferences(ctx, address); err != nil {
		return nil, err
	}
	if un := ts.Unreadable(address, []string{store.NormPath(location)}); len(un) > 0 {
		return func(string) string { return "possibly " + un[0] + ", which could not be read" }, nil
	}
	return func(p string) string { return ts.ReferencedBy(address, p) }, nil
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
			return k.recheck(ctx, env, tbl, req.Now())
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
