package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// leaseRace has n runs take the lease of one store at the same moment and
// returns how many got it. Exactly one must: without the store's
// create-if-absent write (a plain overwrite), every run takes it.
func leaseRace(t *testing.T, ls *leaseStore, n int, now time.Time) int {
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
			_, err := ls.acquire(context.Background(), l, now)
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
func checkLeaseLifecycle(t *testing.T, ls *leaseStore) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if won := leaseRace(t, ls, 6, now); won != 1 {
		t.Fatalf("%d of 6 racing runs took the lease, want exactly 1", won)
	}
	holder, ok, err := ls.current(ctx)
	if err != nil || !ok {
		t.Fatalf("current lease: %v %v", ok, err)
	}
	// Another run is told who holds it and since when.
	_, err = ls.acquire(ctx, Lease{Owner: "b@host", RunID: "run-b", ExpiresAt: now.Add(time.Minute)}, now.Add(10*time.Second))
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
	if err := ls.renew(ctx, holderGen, renewed); err != nil {
		t.Fatalf("renew: %v", err)
	}
	// Lapsed, another run takes it over; the old holder's renewal and
	// release are refused and leave the new lease alone.
	later := now.Add(5 * time.Minute)
	b := Lease{Owner: "b@host", RunID: "run-b", Since: later, ExpiresAt: later.Add(time.Minute)}
	if _, err := ls.acquire(ctx, b, later); err != nil {
		t.Fatalf("take over a lapsed lease: %v", err)
	}
	if err := ls.renew(ctx, holderGen, renewed); !errors.Is(err, ErrLockLost) {
		t.Fatalf("stale holder's renewal: %v, want ErrLockLost", err)
	}
	if err := ls.release(ctx, holder.RunID); !errors.Is(err, ErrLockLost) {
		t.Fatalf("stale holder's release: %v, want ErrLockLost", err)
	}
	if cur, ok, _ := ls.current(ctx); !ok || cur.RunID != "run-b" {
		t.Fatalf("lease after the stale holder's calls: %+v %v", cur, ok)
	}
	if err := ls.release(ctx, "run-b"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, ok, err := ls.current(ctx); ok || err != nil {
		t.Fatalf("a lease is left after release: %v %v", ok, err)
	}
	// Free again: the next run takes it at once.
	if _, err := ls.acquire(ctx, Lease{Owner: "c", RunID: "run-c", ExpiresAt: later.Add(time.Hour)}, later); err != nil {
		t.Fatalf("lease after release: %v", err)
	}
	if err := ls.release(ctx, "run-c"); err != nil {
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
	ls, err := newLeaseStore(context.Background(), tbl)
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
	ls := &leaseStore{dir: env.URL(prefix, store.LockDir), fs: fsys}
	checkLeaseLifecycle(t, ls)
}

// TestLeaseS3OutlivesInterrupt: apply takes a table's lease with its run's
// context, which the first Ctrl-C cancels, and then keeps renewing it while
// the running action finishes and releases it at the end with a detached
// context (apply/lock.go). iceberg-go's blob FS sends every request with the
// context it was opened with, so a lease store opened with the run's
// context could neither renew nor release once interrupted: the lease
// lapsed under a running action and was left behind for the next run.
func TestLeaseS3OutlivesInterrupt(t *testing.T) {
	env := testenv.S3(t)
	prefix := fmt.Sprintf("lease-interrupt-%d", time.Now().UnixNano())
	loc := env.URL(prefix)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &Table{address: "s3.db.leases", t: table.New(table.Identifier{"db", "leases"}, meta, loc+"/metadata/v1.metadata.json",
		func(ctx context.Context) (iceio.IO, error) { return iceio.LoadFS(ctx, env.Properties(), loc) }, nil)}

	runCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	now := time.Now().UTC().Truncate(time.Second)
	lease := Lease{Owner: "a@host", RunID: "run-a", Since: now, ExpiresAt: now.Add(time.Minute)}
	held, err := (&Session{}).TakeLease(runCtx, h, lease, now)
	if err != nil {
		t.Fatal(err)
	}
	interrupt() // the first Ctrl-C: the running action goes on
	detached := context.WithoutCancel(runCtx)
	if err := held.Renew(detached, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("renew after the interrupt: %v", err)
	}
	if err := held.Release(detached); err != nil {
		t.Fatalf("release after the interrupt: %v", err)
	}
	if cur, ok, err := (&Session{}).TableLease(context.Background(), h); ok || err != nil {
		t.Fatalf("lease left after release: %+v %v %v", cur, ok, err)
	}
}
