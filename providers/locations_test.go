package providers

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/testkit"
)

// TestTableLocationsCachedPerSession: apply's nested-table re-check loads
// each table once per session, however many tables it checks, and still
// sees a table created after the first check, one in another catalog too,
// and no longer reports a dropped one. (That the re-check names such a
// table is orphans' TestNestedAtApplySeesNewTables.)
func TestTableLocationsCachedPerSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := testkit.NewLakehouse(t, filepath.Join(dir, "a"), "a")
	b := testkit.NewLakehouse(t, filepath.Join(dir, "b"), "b")
	for _, n := range []string{"s.one", "s.two", "t.x.three"} {
		a.CreateTable(t, n, testkit.TableOptions{})
	}
	sess := Open(&config.Config{Dir: dir, Catalogs: []*config.Catalog{a.ConfigCatalog(), b.ConfigCatalog()}}, Options{})
	t.Cleanup(func() { _ = sess.Close() })

	first, err := sess.tableLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Locs) != 3 || sess.locations.loads != 3 {
		t.Fatalf("first check: %d tables, %d loads", len(first.Locs), sess.locations.loads)
	}
	for range 5 {
		if _, err := sess.tableLocations(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if sess.locations.loads != 3 {
		t.Fatalf("later checks loaded tables again: %d loads", sess.locations.loads)
	}
	// References are read when first asked, each table once per session.
	if sess.locations.reads != 0 {
		t.Fatalf("references read before anyone asked: %d", sess.locations.reads)
	}
	// The asker's own table is not read (its references are never
	// foreign to it) until another table asks.
	for range 3 {
		ts, err := sess.tableLocations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.ReadReferences(ctx, "a.s.one"); err != nil {
			t.Fatal(err)
		}
	}
	if sess.locations.reads != 2 {
		t.Fatalf("references read %d times for 3 tables, the asker's own skipped", sess.locations.reads)
	}
	for _, self := range []string{"a.s.two", "a.s.one", ""} {
		ts, err := sess.tableLocations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.ReadReferences(ctx, self); err != nil {
			t.Fatal(err)
		}
	}
	if sess.locations.reads != 3 {
		t.Fatalf("references read %d times for 3 tables", sess.locations.reads)
	}

	// Created during the apply, inside another table's location, in the
	// other catalog: the next check loads it (and only it).
	inner := b.CreateTable(t, "q.inner", testkit.TableOptions{Location: first.Locs["a.s.one"].Location + "/data/inner"})
	if err := a.Catalog.DropTable(ctx, testkit.Ident("s.two")); err != nil {
		t.Fatal(err)
	}
	got, err := sess.tableLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Locs["b.q.inner"].UUID != inner.Metadata().TableUUID().String() || got.Locs["b.q.inner"].Location != inner.Location() {
		t.Fatalf("a table created since the first check is missing: %+v", got)
	}
	if _, ok := got.Locs["a.s.two"]; ok || len(got.Locs) != 3 || sess.locations.loads != 4 {
		t.Fatalf("after create and drop: %d tables %v, %d loads", len(got.Locs), got.Locs, sess.locations.loads)
	}
}

// TestPlannedTablesListOncePerPlan: a plan's orphan scans share one listing
// of the tables the run can see (issue 44: a fleet's plan listed every
// catalog once per table), while apply's re-check lists afresh and sees a
// table created since; a listing older than listingReuse is not reused.
func TestPlannedTablesListOncePerPlan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := testkit.NewLakehouse(t, filepath.Join(dir, "a"), "a")
	for _, n := range []string{"s.one", "s.two"} {
		a.CreateTable(t, n, testkit.TableOptions{})
	}
	sess := Open(&config.Config{Dir: dir, Catalogs: []*config.Catalog{a.ConfigCatalog()}}, Options{})
	t.Cleanup(func() { _ = sess.Close() })

	for range 5 {
		ts, err := sess.plannedTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Locs) != 2 {
			t.Fatalf("%d tables, want 2", len(ts.Locs))
		}
	}
	if sess.locations.listings != 1 {
		t.Fatalf("5 scans of a plan listed the catalogs %d times, want 1", sess.locations.listings)
	}

	a.CreateTable(t, "s.three", testkit.TableOptions{})
	planned, err := sess.plannedTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned.Locs) != 2 || sess.locations.listings != 1 {
		t.Fatalf("within listingReuse the plan listed again: %d tables, %d listings", len(planned.Locs), sess.locations.listings)
	}
	// Apply's re-check right before deleting lists afresh.
	fresh, err := sess.tableLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fresh.Locs["a.s.three"]; !ok || sess.locations.listings != 2 {
		t.Fatalf("apply's re-check did not list afresh: %v, %d listings", fresh.Locs, sess.locations.listings)
	}
	// A listing older than listingReuse is not reused by a plan either.
	a.CreateTable(t, "s.four", testkit.TableOptions{})
	sess.locations.listedAt = sess.locations.listedAt.Add(-listingReuse)
	later, err := sess.plannedTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := later.Locs["a.s.four"]; !ok || sess.locations.listings != 3 {
		t.Fatalf("a stale listing was reused: %v, %d listings", later.Locs, sess.locations.listings)
	}
}
