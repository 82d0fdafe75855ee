package kind

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/engine"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/store"
)

// Kind is one action kind's home: what it adds to a table's observation
// and its executor. providers registers every Kind once (providers/kinds.go)
// and hands each the session's Env; a Kind knows nothing of the session.
type Kind interface {
	// Types are the diff action types it runs: one, or several that share
	// one commit (properties and the sort order).
	Types() []diff.ActionType
	// Observe adds to st what the kind's planner needs beyond the table's
	// metadata and the current snapshot's aggregate, which st already holds
	// (Files, Partitions, Manifests). It is called for every kind, in the
	// registration order, and does nothing when the policy does not declare
	// the kind. An error fails the table's observation.
	Observe(ctx context.Context, env *Env, tbl *table.Table, st *diff.TableState) error
	// Execute runs req.Actions (all of the kind's types, adjacent in the
	// plan, one commit) on req.Table and returns the table as it left it
	// (nil: unknown), what it did, and an error that wraps store.ErrConflict,
	// store.ErrCommitUnknown or store.ErrRefused where those apply.
	Execute(ctx context.Context, env *Env, req Request) (*table.Table, store.Result, error)
}

// Env is what a kind receives from the session for one table: plain values
// and functions over the session's catalogs, storage settings and engines.
// A function returns an error when the configuration cannot answer (a
// catalog not configured, a malformed property).
type Env struct {
	// Policy is the table's effective policy.
	Policy *config.Effective
	// Catalog is the policy's catalog, opened on first use.
	Catalog func(ctx context.Context) (table.CatalogIO, error)
	// Storage is a copy of the catalog block's properties: the storage
	// settings with which a deletion or a sweep root opens its store.
	Storage func() (map[string]string, error)
	// DeletePace is the catalog's deletion pacing (icewright.delete-*).
	DeletePace func() (objdel.Settings, error)
	// ReadPace returns ctx carrying the catalog's manifest read pacing
	// (icewright.manifest-read-pause*).
	ReadPace func(ctx context.Context) (context.Context, error)
	// Engine is the engine compaction.engine names, nil for icewright's
	// own rewrite; opened once per session, it connects only when it runs.
	Engine func() (engine.Engine, error)
	// Now is the session's clock (the clock of compaction.where and of
	// partition_ageing's cutoff in a plan).
	Now func() time.Time
}

// Request is one execution: the actions as approved (bounded by a fresh
// plan when the table changed, secret property values taken from the
// configuration), the table as loaded for them, and the run's context
// (providers.ExecRequest, whose handles it holds as tables).
type Request struct {
	Table   *table.Table
	Actions []diff.Action
	// Progress reports work done (files, bytes) while the actions run.
	Progress store.Progress
	Now      func() time.Time
	// Abort and FinishWithin bound what an expiry whose commit landed still
	// deletes after the first Ctrl-C (expiry.Spec).
	Abort        context.Context
	FinishWithin time.Duration
	// Memory holds the Go soft memory limit to what running compactions
	// need; nil leaves it alone.
	Memory *compaction.MemoryLimiter
	// Began is the table as the apply loaded it before any action, and
	// Committed the snapshots its executors committed since (expiry.KeepLive).
	Began     *table.Table
	Committed []int64
}

// Clock is req.Now, or time.Now when the request has none.
func (req Request) Clock() time.Time {
	if req.Now != nil {
		return req.Now()
	}
	return time.Now()
}

// CatalogAndStorage opens the catalog and reads its storage settings:
// what an executor that may remove the files it wrote needs.
func (e *Env) CatalogAndStorage(ctx context.Context) (table.CatalogIO, map[string]string, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	props, err := e.Storage()
	if err != nil {
		return nil, nil, err
	}
	return cat, props, nil
}

// Deleting is what an executor that deletes files from the table's storage
// needs: the catalog, its storage settings and its deletion pacing.
type Deleting struct {
	Catalog table.CatalogIO
	Storage map[string]string
	Pace    objdel.Settings
}

// ForDeleting opens what a deleting executor needs (Deleting) and returns
// ctx carrying the catalog's manifest read pacing.
func (e *Env) ForDeleting(ctx context.Context) (context.Context, Deleting, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return ctx, Deleting{}, err
	}
	pace, err := e.DeletePace()
	if err != nil {
		return ctx, Deleting{}, err
	}
	if ctx, err = e.ReadPace(ctx); err != nil {
		return ctx, Deleting{}, err
	}
	props, err := e.Storage()
	if err != nil {
		return ctx, Deleting{}, err
	}
	return ctx, Deleting{Catalog: cat, Storage: props, Pace: pace}, nil
}
