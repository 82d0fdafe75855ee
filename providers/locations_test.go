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
	for range 3 {
		ts, err := sess.tableLocations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.ReadReferences(ctx); err != nil {
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
