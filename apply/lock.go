package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers"
)

// DefaultLeaseTTL is how long a table's lease lasts without renewal. Apply
// renews it before each action once half of it has passed, so only a run
// that stopped (crashed, killed) lets it expire; the next apply then takes
// it over.
const DefaultLeaseTTL = time.Hour

// lockPoll is how often a run waiting for a lease (-lock-timeout) looks
// again.
const lockPoll = 500 * time.Millisecond

// tableLock is one table's lease held by this run.
type tableLock struct {
	r     *runner
	pol   *config.Effective
	lease providers.Lease
}

// lockTable takes the table's lease (docs/design.md §5.4, Locking), waiting up to
// LockTimeout while another run holds it. It returns the table as the
// catalog holds it with the lease taken, and whether the table was still
// the version the plan was made against just before the lease was
// committed (the lease's own commit moves the metadata location).
// A lease held by another run past the timeout is a *providers.LockedError.
func (r *runner) lockTable(ctx context.Context, pol *config.Effective, planned string, tbl *providers.Table) (*tableLock, *providers.Table, bool, error) {
	deadline := r.now().Add(r.opts.LockTimeout)
	for conflicts := 0; ; {
		unchanged := tbl.MetadataLocation() == planned
		l := &tableLock{r: r, pol: pol, lease: r.newLease()}
		next, err := r.b.TakeLease(ctx, tbl, l.lease, r.now())
		if err == nil {
			return l, next, unchanged, nil
		}
		var locked *providers.LockedError
		switch {
		case errors.As(err, &locked):
			if !r.now().Before(deadline) {
				return nil, tbl, false, err
			}
			if werr := sleepCtx(ctx, min(lockPoll, deadline.Sub(r.now()))); werr != nil {
				return nil, tbl, false, err
			}
		case errors.Is(err, providers.ErrConflict) && conflicts < 20:
			// Another run's lease or a writer's commit landed between our
			// read and our commit: read again and decide again.
			conflicts++
		default:
			return nil, tbl, false, fmt.Errorf("lock: %w", err)
		}
		tbl, err = r.b.Table(ctx, pol.Address)
		if err != nil {
			return nil, tbl, false, fmt.Errorf("lock: load: %w", err)
		}
	}
}

func (r *runner) newLease() providers.Lease {
	ttl := r.opts.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return providers.Lease{Owner: r.opts.LockOwner, RunID: r.opts.RunID, ExpiresAt: r.now().Add(ttl).UTC().Truncate(time.Second)}
}

// renew extends the lease on cur when half of it has passed, and returns
// the table as committed (cur itself when no renewal was due).
func (l *tableLock) renew(ctx context.Context, cur *providers.Table) (*providers.Table, error) {
	ttl := l.r.opts.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if l.lease.ExpiresAt.Sub(l.r.now()) > ttl/2 {
		return cur, nil
	}
	held, ok := cur.Lease()
	if !ok || held.RunID != l.lease.RunID {
		return cur, providers.ErrLockLost
	}
	lease := l.r.newLease()
	next, err := l.r.b.TakeLease(ctx, cur, lease, l.r.now())
	if err != nil {
		return cur, fmt.Errorf("renew lock: %w", err)
	}
	l.lease = lease
	return next, nil
}

// release removes the lease, on success and failure alike, and even after
// Ctrl-C (the context is detached: a lease left behind blocks the next run
// until it expires).
func (l *tableLock) release(ctx context.Context) error {
	return l.r.b.DropLease(context.WithoutCancel(ctx), l.pol.Address, l.lease.RunID)
}
