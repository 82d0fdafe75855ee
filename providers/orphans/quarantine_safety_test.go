package orphans

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"

	"github.com/icewright/icewright/diff"
)

// TestQuarantineSymlinksNeverFollowed is issue 13.4: a run directory whose
// data/ is a symbolic link to a directory outside every table must not make
// purge delete, nor restore move, the outside file; a quarantine directory
// that is a link takes no file; a table directory that became a link
// receives no restored file. Each step leaves the outside directory exactly
// as it was.
func TestQuarantineSymlinksNeverFollowed(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 5)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	outside := filepath.Join(l.Dir, "outside")
	writeOld(t, filepath.Join(outside, "x.parquet"), "outside data", t0.Add(-30*24*time.Hour))
	outsideBefore := dirListing(t, outside)
	uuid := tbl.Metadata().TableUUID().String()

	// A run whose data/ is a link to outside/, with a manifest naming
	// data/x.parquet in it: string checks (insideRun) all pass.
	runDir := filepath.Join(root, QuarantineDir, "r-link")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(runDir, "data")); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(root, "data", "x.parquet")
	if err := writeQuarantineManifest(nil, root, filepath.Join(runDir, QuarantineManifestName), QuarantineManifest{
		RunID: "r-link", TableUUID: uuid, CreatedAt: t0, PurgeAfter: t0.Add(24 * time.Hour),
		Files: []diff.QuarantinedFile{{Original: orig, Quarantined: filepath.Join(runDir, "data", "x.parquet"), Size: 12, Moved: true}},
	}); err != nil {
		t.Fatal(err)
	}

	// Purge, with the run planned as due.
	later := t0.Add(10 * 24 * time.Hour)
	due := plannedRuns(t, l.Load(), later)
	if len(due) != 1 || due[0].RunID != "r-link" {
		t.Fatalf("planned runs %+v", due)
	}
	res, err := Remove(ctx, l.Cat, l.Load(), Spec{OlderThan: 72 * time.Hour, Now: later, PurgeRuns: due})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 0 || len(res.DeleteErrors) == 0 || !strings.Contains(strings.Join(res.DeleteErrors, "\n"), "symbolic link") {
		t.Fatalf("purge through a link: %+v", res)
	}
	if got := dirListing(t, outside); !mapsEqual(got, outsideBefore) {
		t.Fatalf("purge changed the outside directory: %v", got)
	}
	if _, err := os.Lstat(filepath.Join(runDir, QuarantineManifestName)); err != nil {
		t.Fatalf("the run's manifest is gone after a failed purge: %v", err)
	}

	// Restore.
	sess := openSession(t, l.Config())
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", "r-link")
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 0 || len(rr.Refused) != 1 || !strings.Contains(rr.Refused[0], "symbolic link") || rr.ManifestKept == "" {
		t.Fatalf("restore through a link: %+v", rr)
	}
	if got := dirListing(t, outside); !mapsEqual(got, outsideBefore) {
		t.Fatalf("restore changed the outside directory: %v", got)
	}
	if _, err := os.Lstat(orig); !os.IsNotExist(err) {
		t.Fatalf("restore put an outside file into the table: %v", err)
	}

	// A run directory that is itself a link is reported, never read.
	if err := os.Symlink(outside, filepath.Join(root, QuarantineDir, "r-dirlink")); err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, r := range scanQuarantine(fs, tbl.Location(), uuid, nil, nil) {
		problems = append(problems, r.RunID+": "+r.Problem)
	}
	if j := strings.Join(problems, "\n"); !strings.Contains(j, "r-dirlink: a symbolic link") {
		t.Fatalf("scan: %v", problems)
	}

	// A quarantine directory that is a link takes no file.
	if err := os.RemoveAll(filepath.Join(root, QuarantineDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, QuarantineDir)); err != nil {
		t.Fatal(err)
	}
	stray := writeOld(t, filepath.Join(root, "data", "stray.parquet"), "stray", t0.Add(-10*24*time.Hour))
	res, err = Remove(ctx, l.Cat, l.Load(), Spec{Paths: []string{stray}, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesQuarantined != 0 || res.FilesNotMoved != 1 || len(res.DeleteErrors) != 1 || !strings.Contains(res.DeleteErrors[0], "symbolic link") {
		t.Fatalf("quarantine into a link: %+v", res)
	}
	if got := dirListing(t, outside); !mapsEqual(got, outsideBefore) {
		t.Fatalf("quarantine changed the outside directory: %v", got)
	}
	if b, err := os.ReadFile(stray); err != nil || string(b) != "stray" {
		t.Fatalf("the stray left its place: %v", err)
	}

	// A table directory replaced by a link receives no restored file.
	if err := os.Remove(filepath.Join(root, QuarantineDir)); err != nil {
		t.Fatal(err)
	}
	res, err = Remove(ctx, l.Cat, l.Load(), Spec{Paths: []string{stray}, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 24 * time.Hour})
	if err != nil || res.FilesQuarantined != 1 {
		t.Fatalf("quarantine: %+v %v", res, err)
	}
	run := newRunID(t0)
	strayDir := filepath.Join(root, "data", "strays")
	if err := os.MkdirAll(strayDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The restore target's directory: data/ is moved away and replaced by
	// a link to outside/.
	if err := os.Rename(filepath.Join(root, "data"), filepath.Join(root, "data.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "data")); err != nil {
		t.Fatal(err)
	}
	rr, err = sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 0 || len(rr.Refused) != 1 || !strings.Contains(rr.Refused[0], "symbolic link") {
		t.Fatalf("restore into a link: %+v", rr)
	}
	if got := dirListing(t, outside); !mapsEqual(got, outsideBefore) {
		t.Fatalf("restore wrote into the outside directory: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(root, QuarantineDir, run, "data", "stray.parquet")); err != nil || string(b) != "stray" {
		t.Fatalf("the quarantined copy is gone: %v", err)
	}
}

// TestConcurrentQuarantineRunsCountExactly is issue 13.6: two quarantine
// applies on the same files. The second starts moving after the first has
// taken three of the five: it counts the two it moved, not five, names the
// three it found gone, lists only its own two in its manifest, and each
// run's restore puts back exactly its files.
func TestConcurrentQuarantineRunsCountExactly(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 5)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var paths []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", n+".parquet"), n, t0.Add(-10*24*time.Hour)))
	}
	before := dirListing(t, root)

	var first store.Result
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 24 * time.Hour, RunID: "second",
		beforeMove: func() {
			var err error
			first, err = Remove(ctx, l.Cat, l.Load(), Spec{Paths: paths[:3], OlderThan: 72 * time.Hour, Now: t0,
				Quarantine: true, QuarantineFor: 24 * time.Hour, RunID: "first"})
			if err != nil {
				t.Errorf("first run: %v", err)
			}
		}}
	second, err := Remove(ctx, l.Cat, l.Load(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if first.FilesQuarantined != 3 || len(first.DeleteErrors) != 0 {
		t.Fatalf("first run %+v", first)
	}
	if second.FilesQuarantined != 2 || second.FilesNotMoved != 0 || len(second.DeleteErrors) != 0 ||
		second.Note != "quarantined 2 files (2 bytes) in run second" {
		t.Fatalf("second run counts files it never held: %+v", second)
	}
	gone := 0
	for _, s := range second.Skipped {
		if strings.Contains(s, "no longer exists when its move started") {
			gone++
		}
	}
	if gone != 3 {
		t.Fatalf("second run's skipped: %v", second.Skipped)
	}
	m, _, err := readQuarantineManifestRaw(nil, root, filepath.Join(root, QuarantineDir, "second", QuarantineManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Files[0].Original != paths[3] || m.Files[1].Original != paths[4] || !m.Files[0].Moved || !m.Files[1].Moved {
		t.Fatalf("second manifest %+v", m.Files)
	}

	sess := openSession(t, l.Config())
	for run, n := range map[string]int{"second": 2, "first": 3} {
		rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
		if err != nil || len(rr.Restored) != n || len(rr.Refused) != 0 || rr.ManifestKept != "" {
			t.Fatalf("restore %s: %+v %v", run, rr, err)
		}
	}
	if got := dirListing(t, root); !mapsEqual(got, before) {
		t.Fatalf("after both restores the tree differs:\n got %v\nwant %v", got, before)
	}
}

// TestRestoreSameFileInBothPlaces: a restore interrupted between its link
// and its unlink leaves one file at both paths; restoring again finishes
// (the quarantined name goes, the file stays), while a different file at
// the original path is never replaced.
func TestRestoreSameFileInBothPlaces(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 5)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	a := writeOld(t, filepath.Join(root, "data", "a.parquet"), "aaaa", t0.Add(-10*24*time.Hour))
	b := writeOld(t, filepath.Join(root, "data", "b.parquet"), "bbbb", t0.Add(-10*24*time.Hour))
	res, err := Remove(ctx, l.Cat, l.Load(), Spec{Paths: []string{a, b}, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 24 * time.Hour})
	if err != nil || res.FilesQuarantined != 2 {
		t.Fatalf("quarantine %+v %v", res, err)
	}
	run := newRunID(t0)
	qa := filepath.Join(root, QuarantineDir, run, "data", "a.parquet")
	if err := os.Link(qa, a); err != nil { // the interrupted restore
		t.Fatal(err)
	}
	writeOld(t, b, "someone else's", t0) // a different file in the way
	rr, err := openSession(t, l.Config()).RestoreQuarantine(ctx, "lake.sales.orders", run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 1 || rr.Restored[0].Original != a || len(rr.Refused) != 1 || !strings.Contains(rr.Refused[0], "not overwritten") || rr.ManifestKept == "" {
		t.Fatalf("restore %+v", rr)
	}
	if _, err := os.Lstat(qa); !os.IsNotExist(err) {
		t.Fatalf("quarantined name of a restored file left: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "aaaa" {
		t.Fatalf("a: %q", got)
	}
	if got, _ := os.ReadFile(b); string(got) != "someone else's" {
		t.Fatalf("b overwritten: %q", got)
	}
}
