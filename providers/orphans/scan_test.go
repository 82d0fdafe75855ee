package orphans

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// Rule 1: a file that exists when storage is listed and is committed before
// the referenced set is built is in both, and is kept. The control run (no
// commit) shows the same file would otherwise be a candidate.
func TestOrphanScanListingFirstRace(t *testing.T) {
	ctx := context.Background()
	for _, commit := range []bool{true, false} {
		l := testkit.NewLakehouse(t, t.TempDir(), "lake")
		tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 2, 10, 1)
		// A real parquet file for the table, written by another table
		// and copied into this one's data directory, old enough to go.
		scratch := testkit.Append(t, l.CreateTable(t, "ns.scratch", testkit.TableOptions{}), 1, 5, 1)
		src := testkit.DataFiles(t, scratch)[0]
		late := filepath.Join(tbl.Location(), "data", "late-commit-00001.parquet")
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		testkit.WriteFileAt(t, late, 0, fixedNow)
		if err := os.WriteFile(late, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		old := fixedNow.Add(-10 * 24 * time.Hour)
		if err := os.Chtimes(late, old, old); err != nil {
			t.Fatal(err)
		}

		sess := sessionFor(t, l)
		pol := testkit.OrphanPolicy("lake.ns.t")
		hooks := orphanHooks{afterListing: func() {
			if !commit {
				return
			}
			txn := l.Reload(t, "ns.t").NewTransaction()
			if err := txn.AddFiles(ctx, []string{late}, nil, false); err != nil {
				t.Fatalf("add files: %v", err)
			}
			if _, err := txn.Commit(ctx); err != nil {
				t.Fatalf("commit: %v", err)
			}
		}}
		scan, err := sess.scanOrphans(ctx, pol, tbl, hooks)
		if err != nil {
			t.Fatal(err)
		}
		isCandidate := slices.Contains(testkit.CandidatePaths(scan), late)
		if commit && isCandidate {
			t.Fatalf("a file committed between listing and referencing is a candidate: %v", testkit.CandidatePaths(scan))
		}
		if !commit && !isCandidate {
			t.Fatalf("control: the uncommitted file is not a candidate: %v", testkit.CandidatePaths(scan))
		}
		// The commit's own new metadata, manifest list and manifest were
		// written after the listing: referenced, not "missing".
		if scan.MissingReferencedCount != 0 || scan.Refusal != "" {
			t.Fatalf("commit=%v: missing %v refusal %q", commit, scan.MissingReferenced, scan.Refusal)
		}
		// Scanned again after the race, the table is whole, with the
		// committed file among its data files.
		if _, err := sess.scanOrphans(ctx, pol, l.Reload(t, "ns.t"), orphanHooks{}); err != nil {
			t.Fatal(err)
		}
		if n := len(testkit.DataFiles(t, l.Reload(t, "ns.t"))); commit && n != 3 {
			t.Errorf("after the race commit: %d data files, want 3", n)
		}
	}
}

// Rule 2: every reference category is counted, and a table whose files are
// all referenced has no candidates.
func TestOrphanScanCategories(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 3, 10, 2)
	tbl = testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("event_id"), int64(3)))
	snap := tbl.CurrentSnapshot().SnapshotID
	meta := filepath.Join(tbl.Location(), "metadata")
	stats := filepath.Join(meta, "stats-1.puffin")
	pstats := filepath.Join(meta, "partition-stats-1.parquet")
	testkit.WriteFileAt(t, stats, 100, fixedNow)
	testkit.WriteFileAt(t, pstats, 50, fixedNow)
	if _, _, err := l.Catalog.CommitTable(ctx, tbl.Identifier(), nil, []table.Update{
		table.NewSetStatisticsUpdate(table.StatisticsFile{SnapshotID: snap, StatisticsPath: stats, FileSizeInBytes: 100, FileFooterSizeInBytes: 10, BlobMetadata: []table.BlobMetadata{}}),
		table.NewSetPartitionStatisticsUpdate(table.PartitionStatisticsFile{SnapshotID: snap, StatisticsPath: pstats, FileSizeInBytes: 50}),
	}); err != nil {
		t.Fatal(err)
	}
	tbl = l.Reload(t, "ns.t")
	testkit.WriteFileAt(t, filepath.Join(meta, "version-hint.text"), 1, fixedNow)

	for _, spill := range []int{0, 2} {
		sess := sessionFor(t, l)
		sess.spill = spill
		scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{reach.CategoryManifestList, reach.CategoryManifest, reach.CategoryData, reach.CategoryDelete, reach.CategoryStatistics, reach.CategoryPartitionStatistics, reach.CategoryMetadata, reach.CategoryVersionHint} {
			if scan.Categories[c] == 0 {
				t.Errorf("spill %d: category %s: 0 referenced files (%v)", spill, c, scan.Categories)
			}
		}
		if len(scan.Candidates) != 0 || len(scan.NonIceberg) != 0 || scan.MissingReferencedCount != 0 {
			t.Errorf("spill %d: candidates %v non-iceberg %v missing %v", spill, testkit.CandidatePaths(scan), scan.NonIceberg, scan.MissingReferenced)
		}
		if scan.ListedFiles != scan.Referenced {
			t.Errorf("spill %d: listed %d, referenced %d: every listed file is referenced", spill, scan.ListedFiles, scan.Referenced)
		}
	}
}

// Differential: on a history with appends, an overwrite, position and
// equality deletes and statistics, our unreferenced old files (Iceberg and
// not) are exactly the orphans iceberg-go's PlanOrphanFiles finds.
func TestOrphanScanMatchesIcebergGo(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	at, err := lakehouse.EventRecords(tbl.Schema(), 100, 10, testkit.Day0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if tbl, err = tbl.OverwriteTable(ctx, at, 100, nil); err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 2, 10, 1)
	tbl = testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("event_id"), int64(101)))
	tbl = testkit.DeleteEquality(t, tbl, 102)
	old := fixedNow.Add(-10 * 24 * time.Hour)
	for _, p := range []string{"data/stray-1.parquet", "data/.stray-1.parquet.crc", "data/_SUCCESS", "metadata/stray-m0.avro", "metadata/00099-dead.metadata.json", "notes.txt"} {
		testkit.WriteFileAt(t, filepath.Join(tbl.Location(), p), 7, old)
	}

	plan, err := l.Reload(t, "ns.t").PlanOrphanFiles(ctx, table.WithFilesOlderThan(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, p := range plan.Files() {
		theirs = append(theirs, diff.NormalizePath(p, nil, nil))
	}
	slices.Sort(theirs)
	// The same with everything in memory and with the listing and the
	// referenced set spilled to disk every 3 records.
	for _, spill := range []int{0, 3} {
		sess := sessionFor(t, l)
		sess.spill = spill
		scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), l.Reload(t, "ns.t"), orphanHooks{})
		if err != nil {
			t.Fatal(err)
		}
		cutoff := time.Now().Add(-24 * time.Hour).UnixMilli()
		var ours []string
		for _, f := range append(slices.Clone(scan.Candidates), scan.NonIceberg...) {
			if f.MtimeMs < cutoff {
				ours = append(ours, diff.NormalizePath(f.Path, nil, nil))
			}
		}
		slices.Sort(ours)
		if !slices.Equal(ours, theirs) || len(ours) != 6 {
			t.Fatalf("spill %d:\nours   %v\ntheirs %v", spill, ours, theirs)
		}
		if scan.MissingReferencedCount != 0 || scan.Categories[reach.CategoryDelete] != 2 || scan.ListedFiles != scan.Referenced+6 {
			t.Errorf("spill %d: missing %v categories %v listed %d referenced %d", spill, scan.MissingReferenced, scan.Categories, scan.ListedFiles, scan.Referenced)
		}
	}
}
