package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/internal/bound"
	"github.com/iceops/iceops/providers/internal/store"
)

// Lease is the value of a table's diff.LockProperty while an apply works
// on it (docs/design.md §5.4, Locking): who holds it, for which run, until when.
// A lease past its expiry belongs to nobody (its run crashed or was killed)
// and the next apply takes it over.
type Lease struct {
	Owner     string    `json:"owner"`
	RunID     string    `json:"run_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// LockedError is a table whose lease another run holds.
type LockedError struct{ Holder Lease }

func (e *LockedError) Error() string {
	return fmt.Sprintf("locked by %s (run %s) until %s", e.Holder.Owner, e.Holder.RunID,
		e.Holder.ExpiresAt.UTC().Format(time.RFC3339))
}

// ErrLockLost: the lease was taken over (it had expired) or removed by
// someone else while this run held it.
var ErrLockLost = errors.New("the table's lock is no longer this run's")

// acquireLease commits lease as tbl's diff.LockProperty through the
// catalog's compare-and-swap: the commit requires that the table's
// metadata is still exactly the version tbl was loaded at (its
// last-updated time, its refs and the lock property as read), so of two
// runs that read the same version only one commit lands; the other gets
// ErrConflict, reloads, and sees the winner's lease. A lease held by
// another run and not expired is a *LockedError; an expired one is taken
// over. It returns the table as committed.
func acquireLease(ctx context.Context, cat catalog.Catalog, tbl *table.Table, lease Lease, now time.Time) (*table.Table, error) {
	cur, held := tbl.Properties()[diff.LockProperty]
	if held {
		var other Lease
		if err := json.Unmarshal([]byte(cur), &other); err == nil && other.RunID != lease.RunID && now.Before(other.ExpiresAt) {
			return tbl, &LockedError{Holder: other}
		}
		// Expired, unreadable (hand-edited) or ours already: take it over.
	}
	val, err := json.Marshal(lease)
	if err != nil {
		return tbl, fmt.Errorf("encode lease: %w", err)
	}
	return commitLease(ctx, cat, tbl, cur, held, []table.Update{
		table.NewSetPropertiesUpdate(iceberg.Properties{diff.LockProperty: string(val)}),
	})
}

// releaseLease removes the lease of runID from the table, if it is still
// that run's. It is called with the run's context detached from Ctrl-C
// (a release must happen on failure and interruption too).
func releaseLease(ctx context.Context, cat catalog.Catalog, ident table.Identifier, runID string) error {
	for attempt := 0; ; attempt++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return fmt.Errorf("release lock: load: %w", err)
		}
		cur, held := tbl.Properties()[diff.LockProperty]
		var l Lease
		if !held || json.Unmarshal([]byte(cur), &l) != nil || l.RunID != runID {
			return ErrLockLost
		}
		_, err = commitLease(ctx, cat, tbl, cur, true, []table.Update{table.NewRemovePropertiesUpdate([]string{diff.LockProperty})})
		if errors.Is(err, ErrConflict) && attempt < 5 {
			// A writer committed meanwhile (it keeps our property): retry
			// on its version.
			continue
		}
		if err != nil {
			return fmt.Errorf("release lock: %w", err)
		}
		return nil
	}
}

// readLease returns the table's lease, if any (for inspect and messages).
func readLease(tbl *table.Table) (Lease, bool) {
	var l Lease
	v, ok := tbl.Properties()[diff.LockProperty]
	if !ok || json.Unmarshal([]byte(v), &l) != nil {
		return Lease{}, false
	}
	return l, true
}

func commitLease(ctx context.Context, cat catalog.Catalog, tbl *table.Table, cur string, held bool, updates []table.Update) (*table.Table, error) {
	meta := tbl.Metadata()
	reqs := store.RefRequirements(meta)
	if _, ok := cat.(*sqlcat.Catalog); ok {
		// The SQL catalog validates requirements in this process, against
		// the metadata it then swaps with a conditional UPDATE: a
		// requirement of our own makes the swap conditional on the exact
		// version read. Other catalogs validate on their server, which knows
		// only Iceberg's requirement types; there the refs and UUID above
		// are what is asserted (see docs/cli.md, Locking).
		reqs = append(reqs, assertVersion{lastUpdatedMs: meta.LastUpdatedMillis(), lock: cur, held: held})
	}
	// Once sent, a lease commit is not cancelled halfway, but is bounded.
	commitCtx, cancel := bound.Commit(ctx)
	_, _, err := cat.CommitTable(commitCtx, tbl.Identifier(), reqs, updates)
	cancel()
	if err != nil {
		return tbl, fmt.Errorf("commit lock: %w", store.ClassifyCommit(err))
	}
	next, err := cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return tbl, fmt.Errorf("lock committed; reload: %w", err)
	}
	return next, nil
}

// assertVersion requires that the table's current metadata is the version
// a lease decision was made on. It is only ever validated in-process (the
// SQL catalog); MarshalJSON fails so it can never be sent to a server
// that would ignore it.
type assertVersion struct {
	lastUpdatedMs int64
	lock          string
	held          bool
}

func (a assertVersion) GetType() string { return "iceops-assert-version" }

func (a assertVersion) Validate(m table.Metadata) error {
	if m == nil {
		return fmt.Errorf("requirement failed: %s: the table does not exist", a.GetType())
	}
	cur, held := m.Properties()[diff.LockProperty]
	if m.LastUpdatedMillis() != a.lastUpdatedMs || held != a.held || cur != a.lock {
		return fmt.Errorf("requirement failed: %s: the table changed since it was read", a.GetType())
	}
	return nil
}

func (a assertVersion) MarshalJSON() ([]byte, error) {
	return nil, errors.New("iceops-assert-version is validated in-process only")
}
