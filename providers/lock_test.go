package providers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iceops/iceops/providers/testkit"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
)

// TestAcquireLeaseCompareAndSwap: two runs that read the same version of a
// table both try to take its lease; the catalog's swap lets exactly one
// commit land. Without the version requirement both commits succeed (the
// SQL catalog applies updates to whatever is current), and both runs would
// work on the table.
func TestAcquireLeaseCompareAndSwap(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a := Lease{Owner: "a@host", RunID: "run-a", ExpiresAt: now.Add(time.Hour)}
	b := Lease{Owner: "b@host", RunID: "run-b", ExpiresAt: now.Add(time.Hour)}

	got, err := acquireLease(ctx, l.Cat, tbl, a, now)
	if err != nil {
		t.Fatalf("first lease: %v", err)
	}
	if held, ok := readLease(got); !ok || held.RunID != "run-a" {
		t.Fatalf("lease after commit: %+v %v", held, ok)
	}
	// b decided on the version before a's commit.
	_, err = acquireLease(ctx, l.Cat, tbl, b, now)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("second lease from the same version: %v, want a conflict", err)
	}
	// Reloaded, b sees a's lease and is told who holds it.
	_, err = acquireLease(ctx, l.Cat, l.Load(), b, now)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder.RunID != "run-a" {
		t.Fatalf("lease held by a: %v", err)
	}
	if want := "locked by a@host (run run-a) until 2026-12-01T13:00:00Z"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// Expired, it is taken over.
	later := now.Add(2 * time.Hour)
	b.ExpiresAt = later.Add(time.Hour)
	if _, err := acquireLease(ctx, l.Cat, l.Load(), b, later); err != nil {
		t.Fatalf("take over an expired lease: %v", err)
	}
	// a's release does not remove b's lease.
	if err := releaseLease(ctx, l.Cat, l.Ident, "run-a"); !errors.Is(err, ErrLockLost) {
		t.Fatalf("release of a lease taken over: %v", err)
	}
	if held, _ := readLease(l.Load()); held.RunID != "run-b" {
		t.Fatalf("b's lease gone after a's release: %+v", held)
	}
	if err := releaseLease(ctx, l.Cat, l.Ident, "run-b"); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Load().Properties()[diff.LockProperty]; ok {
		t.Fatal("lease still set after release")
	}
}

// TestReleaseLeaseAfterWriter: a writer's commit between the lease and its
// release keeps both (the release retries on the writer's version).
func TestReleaseLeaseAfterWriter(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	ctx := context.Background()
	now := time.Now()
	if _, err := acquireLease(ctx, l.Cat, tbl, Lease{Owner: "a", RunID: "r", ExpiresAt: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"writer": "yes"})}); err != nil {
		t.Fatal(err)
	}
	if err := releaseLease(ctx, l.Cat, l.Ident, "r"); err != nil {
		t.Fatal(err)
	}
	props := l.Load().Properties()
	if _, ok := props[diff.LockProperty]; ok || props["writer"] != "yes" {
		t.Fatalf("properties after release: %v", props)
	}
}

// The version requirement is never sent to a server: it would be ignored
// or rejected there.
func TestAssertVersionNotSerialisable(t *testing.T) {
	_, err := assertVersion{}.MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), "in-process") {
		t.Fatalf("MarshalJSON: %v", err)
	}
}
