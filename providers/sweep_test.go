package providers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/testkit"
)

// The orphan scan through the session: observed with the table and planned
// (the scan itself is tested in providers/orphans).

// Strays: an old and a young Iceberg-looking file are candidates with their
// mtimes (diff's age guard keeps the young one); a .crc and _SUCCESS are
// non-Iceberg; an excluded glob and a Flink checkpoint file are excluded; a
// deleted data file is reported as missing (the listing is partial).
func TestOrphanScanStrays(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	tbl, err := lakehouse.AppendEvents(ctx, tbl, 1000, 10, testkit.Day0, 1, iceberg.Properties{"flink.job-id": "f00dfeed"})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(tbl.Location(), "data")
	old := fixedNow.Add(-10 * 24 * time.Hour)
	young := fixedNow.Add(-time.Hour)
	testkit.WriteFileAt(t, filepath.Join(data, "old-stray.parquet"), 300, old)
	testkit.WriteFileAt(t, filepath.Join(data, "young-stray.parquet"), 200, young)
	testkit.WriteFileAt(t, filepath.Join(data, ".old-stray.parquet.crc"), 12, old)
	testkit.WriteFileAt(t, filepath.Join(data, "_SUCCESS"), 0, old)
	testkit.WriteFileAt(t, filepath.Join(data, "tmp", "keep-me.parquet"), 10, old)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), "metadata", "f00dfeed-chk-17.avro"), 10, old)

	sess := sessionFor(t, l)
	pol := testkit.OrphanPolicy("lake.ns.t")
	pol.OrphanFiles.Exclude = config.Setting[[]string]{Value: []string{"data/tmp"}, Set: true}
	st, err := sess.Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	scan := st.Orphans
	got := testkit.CandidatePaths(scan)
	want := []string{filepath.Join(data, "old-stray.parquet"), filepath.Join(data, "young-stray.parquet")}
	if !slices.Equal(got, want) {
		t.Fatalf("candidates = %v, want %v", got, want)
	}
	for _, f := range scan.Candidates {
		wantM := old
		if strings.Contains(f.Path, "young") {
			wantM = young
		}
		if f.MtimeMs != wantM.UnixMilli() || f.Size == 0 {
			t.Errorf("%s: mtime %d size %d", f.Path, f.MtimeMs, f.Size)
		}
	}
	if len(scan.NonIceberg) != 2 {
		t.Errorf("non-iceberg = %+v, want the .crc and _SUCCESS", scan.NonIceberg)
	}
	if scan.Excluded != 2 {
		t.Errorf("excluded = %d, want 2 (exclude glob, flink checkpoint)", scan.Excluded)
	}
	tp := diff.PlanTable(pol, st, fixedNow)
	var act *diff.OrphansAction
	for _, a := range tp.Actions {
		if a.Type == diff.RemoveOrphanFiles {
			act = a.Orphans
		}
	}
	if act == nil || act.Count != 1 || act.KeptByAgeGuard != 1 || act.Paths[0] != want[0] {
		t.Fatalf("plan: %+v refusals %+v", act, tp.Refusals)
	}

	// A referenced file vanishes: the listing no longer covers the table.
	if err := os.Remove(testkit.DataFiles(t, tbl)[0]); err != nil {
		t.Fatal(err)
	}
	scan2, err := sess.scanOrphans(ctx, pol, l.Reload(t, "ns.t"), nil, sess.tableLocations)
	if err != nil {
		t.Fatal(err)
	}
	if scan2.MissingReferencedCount != 1 {
		t.Errorf("missing = %d, want 1", scan2.MissingReferencedCount)
	}
}

// TestPlanReloadShared: a plan's orphan scan reloads its table after the
// listing (rule 2) by asking the SQL catalog for the table's metadata
// location: while it is the observed one, the observed table is the
// reload (its metadata parsed once); once a commit moved it, the reload is
// a fresh load of the new metadata. Apply's reload (orphanKind) always
// loads.
func TestPlanReloadShared(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), "data", "old-stray.parquet"), 300, fixedNow.Add(-10*24*time.Hour))
	sess := sessionFor(t, l)

	st, err := sess.Observe(ctx, testkit.OrphanPolicy("lake.ns.t"))
	if err != nil {
		t.Fatal(err)
	}
	if n := sess.reloadsShared.Load(); n != 1 {
		t.Fatalf("reloads answered by the observed table = %d, want 1 (the scan's of its unchanged table)", n)
	}
	if got := testkit.CandidatePaths(st.Orphans); len(got) != 1 || !strings.HasSuffix(got[0], "old-stray.parquet") {
		t.Fatalf("candidates = %v, want the stray", got)
	}

	loc, ok := sess.currentMetadataLocation(ctx, "lake.ns.t")
	if !ok || loc != tbl.MetadataLocation() {
		t.Fatalf("current metadata location = %q, %v; want %q", loc, ok, tbl.MetadataLocation())
	}
	same, err := sess.planReload(ctx, "lake.ns.t", tbl)
	if err != nil || same != tbl {
		t.Fatalf("unchanged table: reload %p (err %v), want the observed %p", same, err, tbl)
	}
	// A commit between the observation and the reload: the reload is the
	// table as it is now.
	newer := testkit.Append(t, tbl, 1, 10, 1)
	got, err := sess.planReload(ctx, "lake.ns.t", tbl)
	if err != nil {
		t.Fatal(err)
	}
	if got == tbl || got.MetadataLocation() != newer.MetadataLocation() || got.MetadataLocation() == tbl.MetadataLocation() {
		t.Fatalf("changed table: reload at %s, want the new metadata %s (observed %s)", got.MetadataLocation(), newer.MetadataLocation(), tbl.MetadataLocation())
	}
	if n := sess.reloadsShared.Load(); n != 2 {
		t.Fatalf("shared reloads = %d, want 2 (the scan's and the unchanged one)", n)
	}
	// Apply's reload never takes the observed table.
	fresh, err := sess.orphanKind().Reload(ctx, "lake.ns.t")
	if err != nil || fresh == tbl || fresh.MetadataLocation() != newer.MetadataLocation() {
		t.Fatalf("apply's reload: %v, %v", fresh, err)
	}
	// Tables the query cannot name are loaded: a namespace level with a
	// dot or the encoded form's marker (iceberg-go stores it encoded), a
	// table that does not exist (in a nested namespace too).
	for _, a := range []string{"lake.n.s.t", "lake.ns.missing", "lake.\"n.s\".t", "lake.__iceberg_namespace_v1__:x.t"} {
		if loc, ok := sess.currentMetadataLocation(ctx, a); ok {
			t.Errorf("%s: current metadata location %q, want none", a, loc)
		}
	}
}
