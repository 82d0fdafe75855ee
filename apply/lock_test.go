package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// countingLeases counts the leases apply takes; its executors are the
// session's, or fail for the kinds in fail.
type countingLeases struct {
	*providers.Session
	taken atomic.Int32
	fail  map[diff.ActionType]bool
}

func (c *countingLeases) TakeLease(ctx context.Context, tbl *providers.Table, l providers.Lease, now time.Time) (*providers.HeldLease, error) {
	c.taken.Add(1)
	return c.Session.TakeLease(ctx, tbl, l, now)
}

func (c *countingLeases) Executor(t diff.ActionType) (providers.Executor, bool) {
	if c.fail[t] {
		return providers.ExecutorFunc(func(context.Context, providers.ExecRequest) (*providers.Table, providers.ExecResult, error) {
			return nil, providers.ExecResult{}, errors.New("the engine failed")
		}), true
	}
	return c.Session.Executor(t)
}

func noLeaseLeft(t *testing.T, location string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(testkit.LocalPath(t, location), "_icewright_lock"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Fatalf("leases left behind: %v", entries)
	}
}

// TestNoLeaseForNothing (issue 26): re-applying an applied saved plan takes
// no lease and writes no metadata: what is left to do is decided before
// any lease.
func TestNoLeaseForNothing(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := roundTrip(t, e.plan())
	b := &countingLeases{Session: e.sess}
	opts := ApplyOptions{Saved: true, Lock: true, RunID: "run-1", LockOwner: "test", Backoff: func(int) time.Duration { return time.Millisecond }}
	res, err := run(context.Background(), e.cfg, b, p, opts)
	if err != nil || res.Failed() {
		t.Fatalf("first apply: %v\n%s", err, describe(res))
	}
	if b.taken.Load() != 1 {
		t.Fatalf("first apply took %d leases, want 1", b.taken.Load())
	}
	after := e.lake.Reload(t, orders)
	noLeaseLeft(t, after.Location())

	opts.RunID = "run-2"
	res, err = run(context.Background(), e.cfg, b, p, opts)
	if err != nil || res.Failed() {
		t.Fatalf("second apply: %v\n%s", err, describe(res))
	}
	if n := b.taken.Load(); n != 1 {
		t.Fatalf("re-applying an applied plan took a lease (%d in all)", n)
	}
	if got := e.lake.Reload(t, orders).MetadataLocation(); got != after.MetadataLocation() {
		t.Fatalf("re-applying an applied plan wrote metadata: %s -> %s", after.MetadataLocation(), got)
	}
}

// TestFailedTableLeavesNoMetadata: a table whose first committing action
// fails keeps its metadata exactly as it was, lease included (a lease is
// no commit).
func TestFailedTableLeavesNoMetadata(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	before := tbl.MetadataLocation()
	p := e.plan()
	b := &countingLeases{Session: e.sess, fail: map[diff.ActionType]bool{diff.UpdateProperties: true}}
	res, err := run(context.Background(), e.cfg, b, p, ApplyOptions{Lock: true, RunID: "run-1", LockOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed() || b.taken.Load() != 1 {
		t.Fatalf("want a failed table after one lease (took %d):\n%s", b.taken.Load(), describe(res))
	}
	after := e.lake.Reload(t, orders)
	if after.MetadataLocation() != before {
		t.Fatalf("a failed table got new metadata: %s -> %s", before, after.MetadataLocation())
	}
	noLeaseLeft(t, after.Location())
}
