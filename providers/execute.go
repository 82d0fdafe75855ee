package providers

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/lease"
)

// Table is an opaque handle on one loaded table: what apply holds between
// actions (docs/design.md §7: apply knows no iceberg-go type). It names the
// table and the version it was loaded at; only providers looks inside.
type Table struct {
	address string
	t       *table.Table
}

// Address is the table's "catalog.namespace.table".
func (h *Table) Address() string { return h.address }

// UUID is the table's UUID: another UUID at the same address is a table
// dropped and recreated.
func (h *Table) UUID() string { return h.t.Metadata().TableUUID().String() }

// MetadataLocation is the metadata file of the version the handle holds.
func (h *Table) MetadataLocation() string { return h.t.MetadataLocation() }

// with is a handle on another version of the same table; nil for nil.
func (h *Table) with(t *table.Table) *Table {
	if t == nil {
		return nil
	}
	return &Table{address: h.address, t: t}
}

// Table loads the table at address as a handle.
func (s *Session) Table(ctx context.Context, address string) (*Table, error) {
	t, err := s.loadTable(ctx, address)
	if err != nil {
		return nil, err
	}
	return &Table{address: address, t: t}, nil
}

// The lease (providers/lease) as apply sees it.
type (
	// Lease is one apply's hold on a table (lease.Lease).
	Lease = lease.Lease
	// LockedError is a table whose lease another run holds.
	LockedError = lease.LockedError
)

var (
	// ErrLockLost: the lease was taken over or removed while this run
	// held it.
	ErrLockLost = lease.ErrLockLost
	// ErrNoLease is force-unlock of a run that holds no lease on the table.
	ErrNoLease = lease.ErrNoLease
)

// HeldLease is a lease this run holds on a table (TakeLease).
type HeldLease struct {
	store *lease.Store
	gen   int64
	Lease Lease
}

// TakeLease takes the table's lease for l.RunID (docs/design.md §5.4,
// Locking): an object in the table's storage, not a commit. Another run's
// lease in force is a *LockedError.
func (s *Session) TakeLease(ctx context.Context, h *Table, l Lease, now time.Time) (*HeldLease, error) {
	// A lease outlives its run's context: after the first Ctrl-C apply
	// keeps renewing it while the running action finishes, and releases it
	// at the end. Its storage opened with ctx, an interrupted run could do
	// neither on an object store (lease.Open). The values stay (apply's
	// storage limits, the table's breaker), so each request is still
	// bounded.
	ls, err := lease.Open(context.WithoutCancel(ctx), h.t)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	gen, err := ls.Acquire(ctx, l, now)
	if err != nil {
		return nil, err
	}
	return &HeldLease{store: ls, gen: gen, Lease: l}, nil
}

// Renew extends the lease to until; ErrLockLost when another run took it
// over or it was force-unlocked.
func (l *HeldLease) Renew(ctx context.Context, until time.Time) error {
	next := l.Lease
	next.ExpiresAt = until
	if err := l.store.Renew(ctx, l.gen, next); err != nil {
		return err
	}
	l.Lease = next
	return nil
}

// Release removes the lease; ErrLockLost when it was no longer this run's.
func (l *HeldLease) Release(ctx context.Context) error {
	return l.store.Release(ctx, l.Lease.RunID)
}

// TableLease is the lease in force on the table, if any (expired or not).
func (s *Session) TableLease(ctx context.Context, h *Table) (Lease, bool, error) {
	ls, err := lease.Open(ctx, h.t)
	if err != nil {
		return Lease{}, false, err
	}
	return ls.Current(ctx)
}

// ForceUnlock removes the lease of runID on the table at address
// (icewright force-unlock) and returns it; ErrNoLease when that run holds
// none there.
func (s *Session) ForceUnlock(ctx context.Context, address, runID string) (Lease, error) {
	// The storage's deadlines and retries, as every session entry point
	// has: on a stalled store it fails instead of hanging.
	ctx = s.WithStorageLimits(ctx)
	h, err := s.Table(ctx, address)
	if err != nil {
		return Lease{}, err
	}
	ls, err := lease.Open(ctx, h.t)
	if err != nil {
		return Lease{}, err
	}
	return ls.ReleaseRun(ctx, runID)
}

// Executor runs actions on one table: one action, or adjacent actions
// whose kinds share a commit (diff.ActionType.Batch), in one commit. It is
// the seam between apply, which decides what runs when, re-plans and
// retries, and the engine that changes the table. The executors of this
// package run in process through iceberg-go; another engine (Spark,
// Trino) satisfies the same interface.
//
// An executor commits optimistically: a commit that conflicts with a
// concurrent writer is ErrConflict (apply reloads, re-plans within the
// approval and retries). It returns the table as it left it, or nil when
// it cannot tell (apply reloads before each action anyway).
type Executor interface {
	Execute(ctx context.Context, req ExecRequest) (*Table, ExecResult, error)
}

// ExecutorFunc is a function that is an Executor.
type ExecutorFunc func(ctx context.Context, req ExecRequest) (*Table, ExecResult, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, req ExecRequest) (*Table, ExecResult, error) {
	return f(ctx, req)
}

// ExecRequest is one execution: the actions as approved (bounded by a
// fresh plan when the table changed, secret property values taken from
// the configuration), the table as loaded for them, and the run's context.
type ExecRequest struct {
	Table   *Table
	Policy  *config.Effective
	Actions []diff.Action
	// Progress reports work done (files, bytes) while the actions run.
	Progress ExecProgress
	Now      func() time.Time
	// Abort and FinishWithin bound what an expiry whose commit landed still
	// deletes after the first Ctrl-C (expiry.Spec).
	Abort        context.Context
	FinishWithin time.Duration
	// Memory holds the Go soft memory limit to what running compactions
	// need; nil leaves it alone.
	Memory *MemoryLimiter
	// Began is the table as this apply loaded it before any action, and
	// Committed the snapshots this apply's executors have committed since
	// (ExecResult.Snapshots): expiry keeps every file live in Began's
	// current snapshot except what those snapshots replaced
	// (expiry.KeepLive). A nil Began keeps nothing that way.
	Began     *Table
	Committed []int64
}

// MemoryLimiter holds the Go soft memory limit to what running compactions
// need (compaction.MemoryLimiter). It is named here so that apply, which
// owns one per run, depends on providers alone and not on the engine.
type MemoryLimiter = compaction.MemoryLimiter

// NewMemoryLimiter returns a limiter that sets the limit through set
// (debug.SetMemoryLimit in the CLI).
func NewMemoryLimiter(set func(int64) int64) *MemoryLimiter {
	return compaction.NewMemoryLimiter(set)
}
