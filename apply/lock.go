package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// DefaultLeaseTTL is how long a table's lease lasts without renewal. A
// heartbeat renews it every DefaultLeaseTTL/4 while the run works on the
// table, so only a run that stopped (crashed, killed) lets it lapse, and
// the next apply takes the table over within two minutes. A lease is an
// object in the table's storage (providers.Lease), so a renewal is one
// small write, never a metadata version.
const DefaultLeaseTTL = 2 * time.Minute

// lockPoll is how often a run waiting for a lease (-lock-timeout) looks
// again; lockWaitReport how often it says so.
const (
	lockPoll       = 500 * time.Millisecond
	lockWaitReport = 10 * time.Second
)

// tableLock is one table's lease held by this run, kept alive by a
// heartbeat until release.
type tableLock struct {
	r    *runner
	pol  *config.Effective
	held *providers.HeldLease

	stop    chan struct{}
	stopped sync.WaitGroup
	mu      sync.Mutex
	lostErr error // the heartbeat found the lease gone (or could not renew it in time)
}

func (r *runner) leaseTTL() time.Duration {
	if r.opts.LeaseTTL > 0 {
		return r.opts.LeaseTTL
	}
	return DefaultLeaseTTL
}

// lockTable takes the table's lease (docs/design.md §5.4, Locking), waiting up
// to LockTimeout while another run holds it and reporting the holder every
// lockWaitReport. A lease held by another run past the timeout is a
// *providers.LockedError.
func (r *runner) lockTable(ctx context.Context, pol *config.Effective, tbl *providers.Table) (*tableLock, error) {
	deadline := r.now().Add(r.opts.LockTimeout)
	var lastReport time.Time
	for {
		lease := r.newLease()
		held, err := r.b.TakeLease(ctx, tbl, lease, r.now())
		if err == nil {
			l := &tableLock{r: r, pol: pol, held: held, stop: make(chan struct{})}
			l.heartbeat(ctx)
			return l, nil
		}
		var locked *providers.LockedError
		if !errors.As(err, &locked) {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if !r.now().Before(deadline) {
			return nil, err
		}
		if lastReport.IsZero() || r.now().Sub(lastReport) >= lockWaitReport {
			lastReport = r.now()
			emit(r.opts.Progress, Event{Table: pol.Address, Phase: PhaseLockWait,
				Err: fmt.Errorf("waiting up to %s for the lock: %w", deadline.Sub(r.now()).Round(time.Second), locked)})
		}
		if werr := sleepCtx(ctx, min(lockPoll, deadline.Sub(r.now()))); werr != nil {
			return nil, err
		}
	}
}

func (r *runner) newLease() providers.Lease {
	now := r.now().UTC().Truncate(time.Second)
	return providers.Lease{Owner: r.opts.LockOwner, RunID: r.opts.RunID, Since: now, ExpiresAt: now.Add(r.leaseTTL())}
}

// heartbeat renews the lease every TTL/4 until release. A lease found
// taken over or removed, or not renewed before it would lapse, is lost:
// the table's next action does not start (lost).
func (l *tableLock) heartbeat(ctx context.Context) {
	ttl := l.r.leaseTTL()
	ctx = context.WithoutCancel(ctx) // Ctrl-C lets running actions finish: keep the lease meanwhile
	l.stopped.Add(1)
	go func() {
		defer l.stopped.Done()
		t := time.NewTicker(ttl / 4)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
			if err := providers.StorageUnresponsive(ctx); err != nil {
				// Its store stopped answering: a renewal would only wait;
				// the lease lapses within the TTL.
				l.mu.Lock()
				l.lostErr = err
				l.mu.Unlock()
				return
			}
			until := time.Now().Add(ttl).UTC().Truncate(time.Second)
			err := l.held.Renew(ctx, until)
			if err == nil {
				continue
			}
			if errors.Is(err, providers.ErrLockLost) || time.Now().After(l.held.Lease.ExpiresAt.Add(-ttl/4)) {
				l.mu.Lock()
				l.lostErr = err
				l.mu.Unlock()
				return
			}
			// A failed renewal with time left: the next tick tries again.
		}
	}()
}

// lost is the reason the lease is no longer this run's, or nil.
func (l *tableLock) lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// release stops the heartbeat and removes the lease, on success and
// failure alike, and even after Ctrl-C (the context is detached: a lease
// left behind blocks the next run until it lapses).
func (l *tableLock) release(ctx context.Context) error {
	close(l.stop)
	if err := providers.StorageUnresponsive(ctx); err != nil {
		// A release is a write to a store judged unresponsive: it is not
		// sent, nor is a renewal in flight waited for; the lease lapses
		// within its TTL (docs/cli.md).
		return fmt.Errorf("lease not released (%w); it lapses within %s", err, l.r.leaseTTL())
	}
	l.stopped.Wait()
	if err := l.lost(); err != nil {
		return err
	}
	return l.held.Release(context.WithoutCancel(ctx))
}
