package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3://, which providers registers through its catalogs

	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// leaseRace has n runs take the lease of one store at the same moment and
// returns how many got it. Exactly one must: without the store's
// create-if-absent write (a plain overwrite), every run takes it.
func leaseRace(t *testing.T, ls *Store, n int, now time.Time) int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		won     int
		unknown []error
	)
	// Every run reads the lease before any creates one: the race is
	// forced, not left to the scheduler.
	var arrived int
	all := make(chan struct{})
	leaseBeforeCreate = func() {
		mu.Lock()
		arrived++
		first := arrived <= n
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		if first {
			<-all
		}
	}
	defer func() { leaseBeforeCreate = nil }()
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l := Lease{Owner: fmt.Sprintf("run%d@host", i), RunID: fmt.Sprintf("run-%d", i), Since: now, ExpiresAt: now.Add(time.Minute)}
			_, err := ls.Acquire(context.Background(), l, now)
			var locked *LockedError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.As(err, &locked):
			default:
				unknown = append(unknown, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(unknown) > 0 {
		t.Fatalf("lease race: unexpected errors %v", unknown)
	}
	return won
}

// checkLeaseLifecycle runs one store through what apply does with it:
// exclusive take, renewal, takeover after expiry, a stale holder's
// renewal and release refused, release.
func checkLeaseLifecycle(t *testing.T, ls *Store) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if won := leaseRace(t, ls, 6, now); won != 1 {
		t.Fatalf("%d of 6 racing runs took the lease, want exactly 1", won)
	}
	holder, ok, err := ls.Current(ctx)
	if err != nil || !ok {
		t.Fatalf("current lease: %v %v", ok, err)
	}
	// Another run is told who holds it and since when.
	_, err = ls.Acquire(ctx, Lease{Owner: "b@host", RunID: "run-b", ExpiresAt: now.Add(time.Minute)}, now.Add(10*time.Second))
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder.RunID != holder.RunID {
		t.Fatalf("second run: %v, want locked by %s", err, holder.RunID)
	}
	if !strings.Contains(err.Error(), "since 2026-12-01T12:00:00Z") {
		t.Errorf("message %q does not say since when", err)
	}
	gens, err := ls.generations(ctx)
	if err != nil || len(gens) != 1 {
		t.Fatalf("generations after the race: %v %v", gens, err)
	}
	holderGen := gens[0].gen
	// Its holder renews it.
	renewed := holder
	renewed.ExpiresAt = now.Add(2 * time.Minute)
	if err := ls.Renew(ctx, holderGen, renewed); err != nil {
		t.Fatalf("renew: %v", err)
	}
	// Lapsed, another run takes it over; the old holder's renewal and
	// release are refused and leave the new lease alone.
	later := now.Add(5 * time.Minute)
	b := Lease{Owner: "b@host", RunID: "run-b", Since: later, ExpiresAt: later.Add(time.Minute)}
	if _, err := ls.Acquire(ctx, b, later); err != nil {
		t.Fatalf("take over a lapsed lease: %v", err)
	}
	if err := ls.Renew(ctx, holderGen, renewed); !errors.Is(err, ErrLockLost) {
		t.Fatalf("stale holder's renewal: %v, want ErrLockLost", err)
	}
	if err := ls.Release(ctx, holder.RunID); !errors.Is(err, ErrLockLost) {
		t.Fatalf("stale holder's release: %v, want ErrLockLost", err)
	}
	if cur, ok, _ := ls.Current(ctx); !ok || cur.RunID != "run-b" {
		t.Fatalf("lease after the stale holder's calls: %+v %v", cur, ok)
	}
	if err := ls.Release(ctx, "run-b"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, ok, err := ls.Current(ctx); ok || err != nil {
		t.Fatalf("a lease is left after release: %v %v", ok, err)
	}
	// Free again: the next run takes it at once.
	if _, err := ls.Acquire(ctx, Lease{Owner: "c", RunID: "run-c", ExpiresAt: later.Add(time.Hour)}, later); err != nil {
		t.Fatalf("lease after release: %v", err)
	}
	if err := ls.Release(ctx, "run-c"); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseLocal: the lease on a local table, and that taking, renewing
// and releasing it commits nothing (issue 26: a table apply has nothing to
// do for keeps its metadata exactly as it was).
func TestLeaseLocal(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 1, 10)
	before := tbl.MetadataLocation()
	ls, err := Open(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(ls.dir, "/"+store.LockDir) {
		t.Fatalf("lock directory %s", ls.dir)
	}
	checkLeaseLifecycle(t, ls)
	if got := l.Load().MetadataLocation(); got != before {
		t.Fatalf("the lease committed to the table: metadata %s -> %s", before, got)
	}
}

// TestLeaseS3: the same on a real S3 server, where exclusivity is the
// server's If-None-Match: a store that ignored it would let several
// racing runs in.
func TestLeaseS3(t *testing.T) {
	env := testenv.S3(t)
	prefix := fmt.Sprintf("lease-test-%d", time.Now().UnixNano())
	fsys, err := iceio.LoadFS(context.Background(), env.Properties(), env.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ls := &Store{dir: env.URL(prefix, store.LockDir), fs: fsys}
	checkLeaseLifecycle(t, ls)
}
