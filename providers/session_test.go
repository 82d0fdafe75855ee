package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	iceberg "github.com/apache/iceberg-go"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/testkit"
)

// One unreachable catalog is an error for its own tables only; the error is
// cached (the catalog is tried once).
func TestUnreachableCatalogIsolated(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 1, 10, 1)
	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{
		{Name: "gone", Type: "sql", URI: "sqlite:" + filepath.Join(t.TempDir(), "missing", "catalog.db")},
		l.ConfigCatalog(),
		{Name: "pg", Type: "sql", URI: "postgres://icewright:secret@127.0.0.1:1/none?connect_timeout=1"},
		{Name: "rest", Type: "rest", URI: "http://127.0.0.1:1/catalog"},
		{Name: "hive", Type: "hive", URI: "thrift://127.0.0.1:1"},
	}}
	sess := Open(cfg, Options{})
	defer sess.Close()
	if _, err := sess.ListTables(ctx, "gone"); err == nil {
		t.Fatal("listing an unreachable catalog succeeded")
	}
	_, err1 := sess.Catalog(ctx, "gone")
	_, err2 := sess.Catalog(ctx, "gone")
	if err1 == nil || err1 != err2 {
		t.Errorf("catalog error not cached: %v / %v", err1, err2)
	}
	if _, err := sess.Observe(ctx, testkit.Policy("gone.ns.t")); err == nil {
		t.Error("observing a table of an unreachable catalog succeeded")
	}
	_, err := sess.Catalog(ctx, "pg")
	if err == nil {
		t.Error("unreachable postgres catalog opened")
	} else if strings.Contains(err.Error(), "secret") {
		t.Errorf("password in error: %v", err)
	}
	for _, name := range []string{"rest", "hive"} {
		if _, err := sess.ListTables(ctx, name); err == nil {
			t.Errorf("catalog %s at a closed port listed tables", name)
		}
	}
	addrs, err := sess.ListTables(ctx, "lake")
	if err != nil || !slices.Equal(addrs, []string{"lake.ns.t"}) {
		t.Fatalf("lake tables = %v, %v", addrs, err)
	}
	if _, err := sess.Observe(ctx, testkit.Policy("lake.ns.t")); err != nil {
		t.Fatalf("observe on the healthy catalog: %v", err)
	}
}

// ListTables descends multi-level namespaces.
func TestListTablesMultiLevel(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	for _, n := range []string{"a.t1", "a.b.t2", "a.b.c.t3", "z.t4"} {
		l.CreateTable(t, n, testkit.TableOptions{})
	}
	sess := sessionFor(t, l)
	got, err := sess.ListTables(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"lake.a.b.c.t3", "lake.a.b.t2", "lake.a.t1", "lake.z.t4"}
	if !slices.Equal(got, want) {
		t.Fatalf("tables = %v, want %v", got, want)
	}
}

// A table whose manifest was deleted cannot be observed: an error, not a
// silently smaller table.
func TestObserveMissingManifest(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	testkit.Append(t, l.CreateTable(t, "ns.ok", testkit.TableOptions{}), 1, 10, 1)
	_, ms := testkit.CurrentManifests(t, tbl)
	if err := os.Remove(ms[len(ms)-1].FilePath()); err != nil {
		t.Fatal(err)
	}
	sess := sessionFor(t, l)
	if _, err := sess.Observe(ctx, testkit.Policy("lake.ns.t")); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Fatalf("observe with a deleted manifest: %v", err)
	}
	if _, err := sess.Observe(ctx, testkit.Policy("lake.ns.ok")); err != nil {
		t.Fatalf("the other table: %v", err)
	}
}

// Position deletes are counted per data file: with a threshold of 1 the
// file they apply to becomes a compaction candidate although it is too big
// for a tiny target, and the file in the other partition does not.
// (iceberg-go truncates file_path bounds to 16 bytes, so a position delete
// is partition-scoped, as in iceberg-go's own planner.)
func TestObserveDeleteFilesCounted(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 2, 100, 2)
	testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("event_id"), int64(5)))
	sess := sessionFor(t, l)
	pol := testkit.Policy("lake.ns.t")
	pol.TargetFileSize.Value = 10 // every file is "too big" by size
	pol.Compaction.DeleteFileThreshold = config.Setting[int]{Value: 1, Set: true}
	st, err := sess.Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files.DeleteFiles != 1 || st.Files.PositionDeletes+st.Files.DeletionVectors != 1 || st.Manifests.DeleteCount != 1 {
		t.Fatalf("files = %+v manifests = %+v", st.Files, st.Manifests)
	}
	var cands int
	for _, p := range st.Partitions {
		cands += len(p.CandidateSizes)
	}
	if cands != 1 {
		t.Fatalf("candidates = %d, want 1 (the file with a delete)", cands)
	}
	if got := testkit.ScanRows(t, l.Reload(t, "ns.t")); got != 199 {
		t.Fatalf("rows = %d, want 199", got)
	}
}

// An equality delete applies to every data file written before it (lower
// sequence number) in an unpartitioned table, and to none written after.
func TestObserveEqualityDeletes(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	tbl = testkit.DeleteEquality(t, tbl, 1, 2)
	testkit.Append(t, tbl, 1, 10, 1)
	sess := sessionFor(t, l)
	pol := testkit.Policy("lake.ns.t")
	pol.TargetFileSize.Value = 10
	pol.Compaction.DeleteFileThreshold = config.Setting[int]{Value: 1, Set: true}
	st, err := sess.Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files.EqualityDeletes != 1 || st.Files.DataFiles != 4 {
		t.Fatalf("files = %+v", st.Files)
	}
	if n := len(st.Partitions[0].CandidateSizes); n != 3 {
		t.Fatalf("candidates = %d, want the 3 files older than the delete", n)
	}
}

// The planner observes tables in parallel through one session: catalogs
// open once, the nested-table index is built once, results are per table.
func TestObserveConcurrently(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	for i := range 6 {
		testkit.Append(t, l.CreateTable(t, "ns.t"+strconv.Itoa(i), testkit.TableOptions{}), i+1, 10, 1)
	}
	sess := sessionFor(t, l)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	files := make([]int64, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := sess.Observe(ctx, testkit.OrphanPolicy("lake.ns.t"+strconv.Itoa(i)))
			errs[i] = err
			if err == nil {
				files[i] = st.Files.DataFiles
				if st.Orphans.Refusal != "" || len(st.Orphans.NestedTables) != 0 {
					errs[i] = errors.New(st.Orphans.Refusal)
				}
			}
		}()
	}
	wg.Wait()
	for i := range 6 {
		if errs[i] != nil || files[i] != int64(i+1) {
			t.Errorf("t%d: %d files, %v", i, files[i], errs[i])
		}
	}
}
