package orphans

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// Rule 6: symbolic links are reported, never followed and never candidates,
// whether they point at a directory or a file outside the table.
func TestOrphanScanSymlinksNotFollowed(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 2, 10, 1)
	outside := filepath.Join(t.TempDir(), "precious")
	old := fixedNow.Add(-30 * 24 * time.Hour)
	testkit.WriteFileAt(t, filepath.Join(outside, "keep.parquet"), 10, old)
	testkit.WriteFileAt(t, filepath.Join(outside, "deep", "keep2.parquet"), 10, old)
	data := filepath.Join(tbl.Location(), "data")
	if err := os.Symlink(outside, filepath.Join(data, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "keep.parquet"), filepath.Join(data, "linked.parquet")); err != nil {
		t.Fatal(err)
	}
	// ".." in a link target cannot escape either: the link is not followed.
	if err := os.Symlink("../../../../", filepath.Join(data, "up")); err != nil {
		t.Fatal(err)
	}
	sess := sessionFor(t, l)
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Symlinks) != 3 {
		t.Errorf("symlinks = %v, want 3", scan.Symlinks)
	}
	for _, f := range append(slices.Clone(scan.Candidates), scan.NonIceberg...) {
		if strings.Contains(f.Path, "linked") || strings.Contains(f.Path, "precious") || strings.Contains(f.Path, "/up") {
			t.Errorf("%s is a candidate", f.Path)
		}
	}
	if len(scan.Candidates) != 0 {
		t.Errorf("candidates = %v", testkit.CandidatePaths(scan))
	}
}

// Rule 6: another table (of any configured catalog) inside the sweep is
// named; its files would otherwise look orphaned.
func TestOrphanScanNestedTable(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	other := testkit.NewLakehouse(t, t.TempDir(), "other")
	outer := testkit.Append(t, l.CreateTable(t, "ns.outer", testkit.TableOptions{}), 1, 10, 1)
	testkit.Append(t, l.CreateTable(t, "ns.inner", testkit.TableOptions{Location: outer.Location() + "/inner"}), 1, 10, 1)
	testkit.Append(t, other.CreateTable(t, "x.shared", testkit.TableOptions{Location: outer.Location() + "/data/shared"}), 1, 10, 1)
	// A sibling whose name only shares a prefix is not inside.
	testkit.Append(t, l.CreateTable(t, "ns.sibling", testkit.TableOptions{Location: outer.Location() + "_2"}), 1, 10, 1)

	sess := sessionFor(t, l, other)
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.outer"), outer, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"lake.ns.inner", "other.x.shared"}
	if !slices.Equal(scan.NestedTables, want) {
		t.Fatalf("nested = %v, want %v", scan.NestedTables, want)
	}
	tp := diff.PlanTable(testkit.OrphanPolicy("lake.ns.outer"), &diff.TableState{Properties: map[string]string{}, Orphans: scan}, fixedNow)
	if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "lake.ns.inner") {
		t.Errorf("refusals = %+v", tp.Refusals)
	}
}

// Rule 8: s3a:// and s3:// name the same object; a different bucket for the
// same path is a prefix mismatch, reported and never a candidate. The merge
// is exercised directly: the object store is simulated by its listing.
func TestOrphanMergeNormalisesSchemes(t *testing.T) {
	norm := func(p string) string { return diff.NormalizePath(p, nil, nil) }
	roots := []string{norm("s3://bucket/warehouse/t")}
	// Limits of 2 make both the listing and the references spill to disk.
	refs := reach.NewSortedRefSet(2)
	defer refs.Close()
	for _, p := range []string{
		"s3a://bucket/warehouse/t/data/a.parquet",
		"s3://bucket/warehouse/t/data/b.parquet",
		"s3n://bucket/warehouse/t/metadata/00001-x.metadata.json",
		"s3://old-bucket/warehouse/t/data/moved.parquet",
		"s3a://bucket/warehouse/t/data/a.parquet",
	} {
		if err := refs.Add(norm(p), reach.CategoryData, true); err != nil {
			t.Fatal(err)
		}
	}
	mm := newMismatchIndex(roots)
	if err := refs.Seal(mm.visit); err != nil || refs.Len() != 4 {
		t.Fatalf("seal: %v, %d distinct", err, refs.Len())
	}
	listing := reach.NewSorter(2)
	defer listing.Close()
	for _, p := range []string{
		"s3://bucket/warehouse/t/data/a.parquet",
		"s3://bucket/warehouse/t/data/b.parquet",
		"s3://bucket/warehouse/t/data/moved.parquet",
		"s3://bucket/warehouse/t/data/stray.parquet",
		"s3://bucket/warehouse/t/metadata/00001-x.metadata.json",
	} {
		if err := listing.Add(reach.Rec{Key: norm(p), Aux: p, N1: 1, N2: 1}); err != nil {
			t.Fatal(err)
		}
	}
	scan := &diff.OrphanScan{}
	excl, err := newExcluder(roots[0], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := mergeListing(scan, listing, refs, nil, roots, excl, mm.sorted()); err != nil {
		t.Fatal(err)
	}
	if got := testkit.CandidatePaths(scan); !slices.Equal(got, []string{"s3://bucket/warehouse/t/data/stray.parquet"}) {
		t.Errorf("candidates = %v", got)
	}
	if !slices.Equal(scan.PrefixMismatches, []string{"s3://bucket/warehouse/t/data/moved.parquet"}) {
		t.Errorf("prefix mismatches = %v", scan.PrefixMismatches)
	}
	if scan.MissingReferencedCount != 0 {
		t.Errorf("missing = %v", scan.MissingReferenced)
	}
}

func TestIsIcebergFileName(t *testing.T) {
	for name, want := range map[string]bool{
		"00000-1-abc-00001.parquet":           true,
		"snap-1-1-abc.avro":                   true,
		"00003-abc.metadata.json":             true,
		"v2.gz.metadata.json":                 true,
		"stats.puffin":                        true,
		"version-hint.text":                   true,
		".00000-1-abc-00001.parquet.crc":      false,
		"_SUCCESS":                            false,
		"README.md":                           false,
		"00000-1-abc-00001.parquet.tmp":       false,
		"part-00000.snappy.parquet.inprogres": false,
	} {
		if got := isIcebergFileName(name); got != want {
			t.Errorf("isIcebergFileName(%q) = %v, want %v", name, got, want)
		}
	}
}

// write.data.path outside the location is swept too; a relative one is
// refused rather than listed against the working directory.
func TestOrphanScanDataPath(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	elsewhere := filepath.Join(t.TempDir(), "data-elsewhere")
	tbl := l.CreateTable(t, "ns.t", testkit.TableOptions{Properties: map[string]string{"write.data.path": elsewhere}})
	tbl = testkit.Append(t, tbl, 2, 10, 1)
	testkit.WriteFileAt(t, filepath.Join(elsewhere, "stray.parquet"), 10, fixedNow.Add(-10*24*time.Hour))
	sess := sessionFor(t, l)
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Roots) != 2 || scan.Categories[reach.CategoryData] != 2 || scan.MissingReferencedCount != 0 {
		t.Fatalf("roots %v categories %v missing %v", scan.Roots, scan.Categories, scan.MissingReferenced)
	}
	if got := testkit.CandidatePaths(scan); !slices.Equal(got, []string{filepath.Join(elsewhere, "stray.parquet")}) {
		t.Fatalf("candidates = %v", got)
	}

	rel := l.CreateTable(t, "ns.rel", testkit.TableOptions{Properties: map[string]string{"write.data.path": "relative/data"}})
	scan, err = sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.rel"), rel, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if scan.Refusal == "" || len(scan.Candidates) != 0 {
		t.Fatalf("relative write.data.path: refusal %q candidates %v", scan.Refusal, testkit.CandidatePaths(scan))
	}
}

// When another configured catalog cannot be listed, nesting cannot be ruled
// out: the scan carries a refusal.
func TestOrphanScanUnknownNesting(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 1, 10, 1)
	sess := sessionFor(t, l)
	sess.cfg.Catalogs = append(sess.cfg.Catalogs, &config.Catalog{Name: "gone", Type: "sql", URI: "sqlite:" + filepath.Join(t.TempDir(), "nope", "c.db")})
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(scan.Refusal, "gone") {
		t.Fatalf("refusal = %q", scan.Refusal)
	}
}

// Files already moved to the quarantine directory are not listed again.
func TestOrphanScanSkipsQuarantine(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 1, 10, 1)
	old := fixedNow.Add(-10 * 24 * time.Hour)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), QuarantineDir, "run-1", "data", "x.parquet"), 10, old)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), "data", "y.parquet"), 10, old)
	sess := sessionFor(t, l)
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.CandidatePaths(scan); !slices.Equal(got, []string{filepath.Join(tbl.Location(), "data", "y.parquet")}) {
		t.Fatalf("candidates = %v", got)
	}
}
