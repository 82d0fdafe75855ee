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
