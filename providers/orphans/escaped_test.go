package orphans

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// Apply's re-check (Remove) keeps a planned orphan that the table has come
// to reference, since the plan, by a file: URI whose literal name it is
// (as Java writes a file under an escaped partition directory): the
// reference's decoded name is another file, so only the literal name
// (orphanLiteral) says the planned path is live.
func TestRemoveKeepsLiteralNameOfEscapedReference(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("setup: %d tasks, %v", len(tasks), err)
	}
	src := tasks[0].File
	raw, err := os.ReadFile(testkit.LocalPath(t, src.FilePath()))
	if err != nil {
		t.Fatal(err)
	}
	// The plan saw this file unreferenced and old.
	lit := filepath.Join(testkit.LocalPath(t, tbl.Location()), "data", "ts=2023-08-22T09%3A15%3A20", "00000-0-java.parquet")
	if err := os.MkdirAll(filepath.Dir(lit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lit, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(lit, old, old); err != nil {
		t.Fatal(err)
	}
	// Since the plan, a writer added it by its escaped file:// URI.
	testkit.CommitDataFileAt(t, tbl, src, "file://"+lit, nil)
	res, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{lit}, OlderThan: 72 * time.Hour, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lit); err != nil {
		t.Fatalf("the file the table references by its literal name was deleted (%+v): %v", res, err)
	}
	if res.FilesDeleted != 0 || !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, "referenced by the table now") }) {
		t.Errorf("result %+v", res)
	}
}

// A quarantine run holding the literal name of a file: URI the table
// references holds a live file (the one Java reads), though the run names
// it by the literal path and the scan misses the URI's decoded name: the
// plan says so and the run is never due for purging.
func TestQuarantineRunHoldingLiteralName(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 1, 5, 1)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("setup: %d tasks, %v", len(tasks), err)
	}
	root := testkit.LocalPath(t, tbl.Location())
	lit := filepath.Join(root, "data", "ts=2023-08-22T09%3A15%3A20", "00000-0-java.parquet")
	tbl = testkit.CommitDataFileAt(t, tbl, tasks[0].File, "file://"+lit, nil)
	// An earlier sweep quarantined the file under its literal name.
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	runDir := filepath.Join(root, QuarantineDir, "r-lit")
	q := filepath.Join(runDir, "data", "ts=2023-08-22T09%3A15%3A20", "00000-0-java.parquet")
	testkit.WriteFileAt(t, q, 10, t0)
	man := QuarantineManifest{RunID: "r-lit", TableUUID: tbl.Metadata().TableUUID().String(), CreatedAt: t0, PurgeAfter: t0.Add(time.Hour),
		Files: []diff.QuarantinedFile{{Original: lit, Quarantined: q, Size: 10, Moved: true}}}
	if err := writeQuarantineManifest(nil, root, filepath.Join(runDir, QuarantineManifestName), man); err != nil {
		t.Fatal(err)
	}
	pol := testkit.OrphanPolicy("lake.ns.t")
	scan, tp := planSweep(t, sessionFor(t, l), pol, tbl)
	if len(scan.Quarantine) != 1 || !slices.Equal(scan.Quarantine[0].Referenced, []string{lit}) {
		t.Fatalf("runs %+v (missing %v)", scan.Quarantine, scan.MissingReferenced)
	}
	if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "quarantine run r-lit holds "+lit) {
		t.Fatalf("refusals %+v", tp.Refusals)
	}
	if due := diff.DuePurgeRuns(scan.Quarantine, t0.Add(30*24*time.Hour)); len(due) != 0 {
		t.Fatalf("a run holding a live file is due: %+v", due)
	}
}
