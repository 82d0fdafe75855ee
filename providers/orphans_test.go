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
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/internal/lakehouse"
	"github.com/iceops/iceops/providers/testkit"
)

func orphanPolicy(address string) *config.Effective {
	pol := effective(address)
	pol.OrphanFiles = config.OrphanPolicy{
		Declared:         true,
		OlderThan:        config.Setting[time.Duration]{Value: 72 * time.Hour, Set: true},
		MaxOrphanRatio:   config.Setting[float64]{Value: 0.25},
		MinFilesForRatio: config.Setting[int]{Value: 100},
		PrefixMismatch:   config.Setting[string]{Value: "error"},
	}
	return pol
}

func writeFile(t *testing.T, p string, size int, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func candidatePaths(scan *diff.OrphanScan) []string {
	var out []string
	for _, f := range scan.Candidates {
		out = append(out, f.Path)
	}
	return out
}

// dataFiles lists the table's current data file paths.
func dataFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	var out []string
	err := ReachableFiles(context.Background(), tbl, []int64{tbl.CurrentSnapshot().SnapshotID}, func(p string, _ int64, cat string) error {
		if cat == CategoryData {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

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
		src := dataFiles(t, scratch)[0]
		late := filepath.Join(tbl.Location(), "data", "late-commit-00001.parquet")
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, late, 0, fixedNow)
		if err := os.WriteFile(late, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		old := fixedNow.Add(-10 * 24 * time.Hour)
		if err := os.Chtimes(late, old, old); err != nil {
			t.Fatal(err)
		}

		sess := sessionFor(t, l)
		pol := orphanPolicy("lake.ns.t")
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
		isCandidate := slices.Contains(candidatePaths(scan), late)
		if commit && isCandidate {
			t.Fatalf("a file committed between listing and referencing is a candidate: %v", candidatePaths(scan))
		}
		if !commit && !isCandidate {
			t.Fatalf("control: the uncommitted file is not a candidate: %v", candidatePaths(scan))
		}
		// The commit's own new metadata, manifest list and manifest were
		// written after the listing: referenced, not "missing".
		if scan.MissingReferencedCount != 0 || scan.Refusal != "" {
			t.Fatalf("commit=%v: missing %v refusal %q", commit, scan.MissingReferenced, scan.Refusal)
		}
		st, err := sess.Observe(ctx, pol)
		if err != nil {
			t.Fatal(err)
		}
		if commit && st.Files.DataFiles != 3 {
			t.Errorf("after the race commit: %d data files, want 3", st.Files.DataFiles)
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
	writeFile(t, stats, 100, fixedNow)
	writeFile(t, pstats, 50, fixedNow)
	if _, _, err := l.Catalog.CommitTable(ctx, tbl.Identifier(), nil, []table.Update{
		table.NewSetStatisticsUpdate(table.StatisticsFile{SnapshotID: snap, StatisticsPath: stats, FileSizeInBytes: 100, FileFooterSizeInBytes: 10, BlobMetadata: []table.BlobMetadata{}}),
		table.NewSetPartitionStatisticsUpdate(table.PartitionStatisticsFile{SnapshotID: snap, StatisticsPath: pstats, FileSizeInBytes: 50}),
	}); err != nil {
		t.Fatal(err)
	}
	tbl = l.Reload(t, "ns.t")
	writeFile(t, filepath.Join(meta, "version-hint.text"), 1, fixedNow)

	for _, spill := range []int{0, 2} {
		sess := sessionFor(t, l)
		sess.spill = spill
		scan, err := sess.scanOrphans(ctx, orphanPolicy("lake.ns.t"), tbl, orphanHooks{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{CategoryManifestList, CategoryManifest, CategoryData, CategoryDelete, CategoryStatistics, CategoryPartitionStatistics, CategoryMetadata, CategoryVersionHint} {
			if scan.Categories[c] == 0 {
				t.Errorf("spill %d: category %s: 0 referenced files (%v)", spill, c, scan.Categories)
			}
		}
		if len(scan.Candidates) != 0 || len(scan.NonIceberg) != 0 || scan.MissingReferencedCount != 0 {
			t.Errorf("spill %d: candidates %v non-iceberg %v missing %v", spill, candidatePaths(scan), scan.NonIceberg, scan.MissingReferenced)
		}
		if scan.ListedFiles != scan.Referenced {
			t.Errorf("spill %d: listed %d, referenced %d: every listed file is referenced", spill, scan.ListedFiles, scan.Referenced)
		}
	}
}

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
	writeFile(t, filepath.Join(data, "old-stray.parquet"), 300, old)
	writeFile(t, filepath.Join(data, "young-stray.parquet"), 200, young)
	writeFile(t, filepath.Join(data, ".old-stray.parquet.crc"), 12, old)
	writeFile(t, filepath.Join(data, "_SUCCESS"), 0, old)
	writeFile(t, filepath.Join(data, "tmp", "keep-me.parquet"), 10, old)
	writeFile(t, filepath.Join(tbl.Location(), "metadata", "f00dfeed-chk-17.avro"), 10, old)

	sess := sessionFor(t, l)
	pol := orphanPolicy("lake.ns.t")
	pol.OrphanFiles.Exclude = config.Setting[[]string]{Value: []string{"data/tmp"}, Set: true}
	st, err := sess.Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	scan := st.Orphans
	got := candidatePaths(scan)
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
	if err := os.Remove(dataFiles(t, tbl)[0]); err != nil {
		t.Fatal(err)
	}
	scan2, err := sess.scanOrphans(ctx, pol, l.Reload(t, "ns.t"), orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if scan2.MissingReferencedCount != 1 {
		t.Errorf("missing = %d, want 1", scan2.MissingReferencedCount)
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
		writeFile(t, filepath.Join(tbl.Location(), p), 7, old)
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
		scan, err := sess.scanOrphans(ctx, orphanPolicy("lake.ns.t"), l.Reload(t, "ns.t"), orphanHooks{})
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
		if scan.MissingReferencedCount != 0 || scan.Categories[CategoryDelete] != 2 || scan.ListedFiles != scan.Referenced+6 {
			t.Errorf("spill %d: missing %v categories %v listed %d referenced %d", spill, scan.MissingReferenced, scan.Categories, scan.ListedFiles, scan.Referenced)
		}
	}
}
