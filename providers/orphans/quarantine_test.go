package orphans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// writeOld writes a stray file with an mtime of at.
func writeOld(t *testing.T, p, body string, at time.Time) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRemoveOrphanFilesFailedDeleteContinues: one file turns into a
// non-empty directory just before its deletion (root ignores permissions,
// so this is the failure mode a test can force); it is reported, every
// other orphan is still deleted, and no batch runs more than the bound at
// once.
func TestRemoveOrphanFilesFailedDeleteContinues(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	var paths []string
	for i := range 25 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", "stray-"+string(rune('a'+i))+".parquet"), "x", old))
	}
	victim := paths[7]

	var inFlight, maxInFlight atomic.Int64
	var mu sync.Mutex
	var order []string
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: now, DeleteConcurrency: 8, BatchSize: 4}
	spec.remove = func(p string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		order = append(order, p)
		mu.Unlock()
		if p == victim {
			// Someone puts a directory with content where the file was.
			if err := os.Remove(p); err != nil {
				return err
			}
			writeOld(t, filepath.Join(p, "inner"), "keep me", old)
		}
		return os.Remove(p)
	}
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 24 {
		t.Fatalf("deleted %d, want 24 (all but the victim): %+v", res.FilesDeleted, res)
	}
	if len(res.DeleteErrors) != 1 || !strings.HasPrefix(res.DeleteErrors[0], victim+": ") {
		t.Fatalf("delete errors %v, want exactly the victim", res.DeleteErrors)
	}
	if got := maxInFlight.Load(); got > 4 {
		t.Fatalf("%d deletions at once, want at most the batch of 4", got)
	}
	if len(order) != 25 {
		t.Fatalf("%d deletions attempted, want 25", len(order))
	}
	if b, err := os.ReadFile(filepath.Join(victim, "inner")); err != nil || string(b) != "keep me" {
		t.Fatalf("the directory's content was touched: %q %v", b, err)
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 10))
}

// TestRemoveOrphanFilesBatchesAndConcurrency: with many files, deletions
// are bounded by the concurrency, not the batch.
func TestRemoveOrphanFilesBoundedConcurrency(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	var paths []string
	for i := range 60 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", "b", strings.Repeat("z", i%5+1)+"-"+time.Duration(i).String()+".parquet"), "x", old))
	}
	var inFlight, maxInFlight atomic.Int64
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: now, DeleteConcurrency: 3, BatchSize: 1000}
	spec.remove = func(p string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		return os.Remove(p)
	}
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil || res.FilesDeleted != 60 {
		t.Fatalf("deleted %d, err %v", res.FilesDeleted, err)
	}
	if got := maxInFlight.Load(); got > 3 || got < 2 {
		t.Fatalf("max %d deletions at once, want 2..3 (bounded and actually parallel)", got)
	}
}

// TestRemoveOrphanFilesGCDisabledSincePlan: the plan saw gc enabled; a
// person disabled it before apply. Nothing is deleted.
func TestRemoveOrphanFilesGCDisabledSincePlan(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 5)
	now := time.Now()
	p := writeOld(t, filepath.Join(testkit.LocalPath(t, tbl.Location()), "data", "stray.parquet"), "x", now.Add(-30*24*time.Hour))
	if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"gc.enabled": "false"})}); err != nil {
		t.Fatal(err)
	}
	_, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: now})
	if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), "gc.enabled") {
		t.Fatalf("want a gc.enabled refusal, got %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("deleted despite gc.enabled=false")
	}
}

// TestRemoveOrphanFilesNestedTableSincePlan: a table created inside the
// sweep after the plan (its files look orphaned) stops the deletion, and
// the refusal names it. The same through OtherTables (other catalogs).
func TestRemoveOrphanFilesNestedTableSincePlan(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 5)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	p := writeOld(t, filepath.Join(root, "data", "stray.parquet"), "x", now.Add(-30*24*time.Hour))

	inner, err := l.Cat.CreateTable(ctx, table.Identifier{"sales", "inner"}, testkit.OrdersSchema,
		catalog.WithLocation("file://"+filepath.Join(root, "data", "inner")))
	if err != nil {
		t.Fatal(err)
	}
	testkit.AppendIDs(t, inner, 0, 3)
	_, err = Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: now})
	if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), "sales.inner") {
		t.Fatalf("want a refusal naming sales.inner, got %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("deleted despite a nested table")
	}

	// Another catalog's table with exactly the same location.
	other := func(context.Context) (*Tables, error) {
		return NewTables(map[string]TableLocation{
			"lake.sales.orders": {UUID: tbl.Metadata().TableUUID().String(), Location: tbl.Location()},
			"other.x.twin":      {UUID: "6f1c7d1e-0000-0000-0000-000000000001", Location: tbl.Location()},
		}), nil
	}
	_, err = Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: now, OtherTables: other, Address: "lake.sales.orders"})
	if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), "other.x.twin") || strings.Contains(err.Error(), "lake.sales.orders") {
		t.Fatalf("want a refusal naming other.x.twin only, got %v", err)
	}
	failing := func(context.Context) (*Tables, error) { return nil, errors.New("catalog down") }
	_, err = Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: now, OtherTables: failing, Address: "lake.sales.orders"})
	if !errors.Is(err, store.ErrRefused) {
		t.Fatalf("an unknown answer must refuse, got %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("deleted")
	}
}

// dirListing is every file and symlink under dir with its content digest
// (size and bytes for files, target for links).
func dirListing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQuarantineRestorePurge walks the whole life of a quarantine on a real
// table: orphans move under .icewright-quarantine/<run>/ with a manifest, the
// table reads the same rows, restore puts them back byte for byte (and
// refuses to overwrite), a second quarantine is purged only after its
// duration, and never while the table references one of its files.
func TestQuarantineRestorePurge(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := t0.Add(-10 * 24 * time.Hour)
	a := writeOld(t, filepath.Join(root, "data", "sub", "a.parquet"), "aaaa", old)
	b := writeOld(t, filepath.Join(root, "metadata", "b-m0.avro"), "bb", old)
	before := dirListing(t, root)

	spec := Spec{Paths: []string{a, b}, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 7 * 24 * time.Hour}
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	run := newRunID(t0)
	if res.FilesQuarantined != 2 || res.FilesDeleted != 0 || res.BytesFreed != 0 || res.Note != "quarantined 2 files (6 bytes) in run "+run {
		t.Fatalf("result %+v", res)
	}
	runDir := filepath.Join(root, QuarantineDir, run)
	for rel, body := range map[string]string{"data/sub/a.parquet": "aaaa", "metadata/b-m0.avro": "bb"} {
		if got, err := os.ReadFile(filepath.Join(runDir, rel)); err != nil || string(got) != body {
			t.Fatalf("%s in quarantine: %q %v", rel, got, err)
		}
	}
	for _, p := range []string{a, b} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still in place", p)
		}
	}
	var man QuarantineManifest
	raw, err := os.ReadFile(filepath.Join(runDir, QuarantineManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	if man.RunID != run || !man.PurgeAfter.Equal(t0.Add(7*24*time.Hour)) || len(man.Files) != 2 {
		t.Fatalf("manifest %+v", man)
	}
	for _, f := range man.Files {
		if !f.Moved || !f.Mtime.Equal(old.Truncate(time.Second)) && !f.Mtime.Equal(old) {
			t.Fatalf("manifest entry %+v (want moved, mtime %s)", f, old)
		}
		if f.Original == a && f.Size != 4 || f.Original == b && f.Size != 2 {
			t.Fatalf("manifest entry size %+v", f)
		}
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 10))

	// Restore, with a file in the way of one of them.
	sess := openSession(t, l.Config())
	writeOld(t, b, "someone else's", t0)
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 1 || rr.Restored[0].Original != a || len(rr.Refused) != 1 || !strings.Contains(rr.Refused[0], "not overwritten") {
		t.Fatalf("restore %+v", rr)
	}
	if got, _ := os.ReadFile(b); string(got) != "someone else's" {
		t.Fatalf("the file in the way was overwritten: %q", got)
	}
	if _, err := os.Stat(filepath.Join(runDir, "metadata", "b-m0.avro")); err != nil {
		t.Fatal("the refused file's quarantined copy is gone")
	}
	// Clear the way and restore the rest: the tree is as before.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	rr, err = sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	if err != nil || len(rr.Restored) != 1 || len(rr.Refused) != 0 {
		t.Fatalf("second restore %+v %v", rr, err)
	}
	if got := dirListing(t, root); !mapsEqual(got, before) {
		t.Fatalf("after restore the tree differs:\n got %v\nwant %v", got, before)
	}
	st, _ := os.Stat(a)
	if !st.ModTime().Equal(old) {
		t.Fatalf("restored mtime %s, want %s (the age guard must see the original age)", st.ModTime(), old)
	}
	if _, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", run); err == nil {
		t.Fatal("a finished run restored again")
	}
	if _, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", "../x"); err == nil {
		t.Fatal("a run id with a path accepted")
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 10))

	// Quarantine again, then applies at later times (injected clock).
	res, err = Remove(ctx, l.Cat, l.Load(), spec)
	if err != nil || res.FilesQuarantined != 2 {
		t.Fatalf("second quarantine %+v %v", res, err)
	}
	later := spec
	later.Paths = nil
	later.Now = t0.Add(6 * 24 * time.Hour)
	if due := plannedRuns(t, l.Load(), later.Now); len(due) != 0 {
		t.Fatalf("a run is due after 6 of its 7 days: %+v", due)
	}
	// Even listed (a hand-made spec), a run is not purged before its time.
	later.PurgeRuns = plannedRuns(t, l.Load(), t0.Add(8*24*time.Hour))
	res, err = Remove(ctx, l.Cat, l.Load(), later)
	if err != nil || !res.NoOp || strings.Contains(res.Note, "purged") || !strings.Contains(res.Note, run+": not due, kept") {
		t.Fatalf("purged before its time: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "data", "sub", "a.parquet")); err != nil {
		t.Fatal("purged before its time")
	}
	later.Now = t0.Add(8 * 24 * time.Hour)
	later.PurgeRuns = plannedRuns(t, l.Load(), later.Now)
	if len(later.PurgeRuns) != 1 || later.PurgeRuns[0].RunID != run || later.PurgeRuns[0].Files != 2 || later.PurgeRuns[0].Bytes != 6 {
		t.Fatalf("planned runs %+v", later.PurgeRuns)
	}
	res, err = Remove(ctx, l.Cat, l.Load(), later)
	if err != nil || res.NoOp || !strings.Contains(res.Note, "purged quarantine runs "+run+" (2 files, 6 bytes)") || res.FilesDeleted != 2 || res.BytesFreed != 6 {
		t.Fatalf("purge: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, QuarantineDir, run)); !os.IsNotExist(err) {
		t.Fatalf("run directory left: %v", err)
	}
	for _, p := range []string{a, b} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s back in place", p)
		}
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 10))
}

// TestQuarantinePurgeKeepsReferenced: a run whose original path the table
// references (a slow writer committed a file that had been quarantined) is
// the only copy of live data: purge keeps it and says to restore.
func TestQuarantinePurgeKeepsReferenced(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live := tasks[0].File.FilePath()
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	runDir := filepath.Join(root, QuarantineDir, "r-live")
	q := writeOld(t, filepath.Join(runDir, "data", "copy.parquet"), "copy", t0)
	man := QuarantineManifest{RunID: "r-live", TableUUID: tbl.Metadata().TableUUID().String(), CreatedAt: t0,
		PurgeAfter: t0.Add(time.Hour), Files: []diff.QuarantinedFile{{Original: live, Quarantined: "file://" + q, Size: 4, Moved: true}}}
	if err := writeQuarantineManifest(nil, root, filepath.Join(runDir, QuarantineManifestName), man); err != nil {
		t.Fatal(err)
	}
	// A run without a recorded purge time is never purged either.
	q2 := writeOld(t, filepath.Join(root, QuarantineDir, "r-forever", "data", "x.parquet"), "x", t0)
	if err := writeQuarantineManifest(nil, root, filepath.Join(root, QuarantineDir, "r-forever", QuarantineManifestName),
		QuarantineManifest{RunID: "r-forever", TableUUID: tbl.Metadata().TableUUID().String(), CreatedAt: t0,
			Files: []diff.QuarantinedFile{{Original: filepath.Join(root, "data", "x.parquet"), Quarantined: q2, Size: 1, Moved: true}}}); err != nil {
		t.Fatal(err)
	}
	// A manifest that names a file outside its run (here another live data
	// file, spelled with ..) must not make purge delete it.
	live2 := testkit.LocalPath(t, tasks[len(tasks)-1].File.FilePath())
	q3 := writeOld(t, filepath.Join(root, QuarantineDir, "r-evil", "data", "x.parquet"), "x", t0)
	evil := filepath.Join(root, QuarantineDir, "r-evil", "..", "..", "data", filepath.Base(live2))
	if err := writeQuarantineManifest(nil, root, filepath.Join(root, QuarantineDir, "r-evil", QuarantineManifestName),
		QuarantineManifest{RunID: "r-evil", TableUUID: tbl.Metadata().TableUUID().String(), CreatedAt: t0, PurgeAfter: t0,
			Files: []diff.QuarantinedFile{
				{Original: filepath.Join(root, "data", "gone.parquet"), Quarantined: q3, Size: 1, Moved: true},
				{Original: filepath.Join(root, "data", "gone2.parquet"), Quarantined: evil, Size: 1, Moved: true},
				{Original: filepath.Join(root, "data", "gone3.parquet"), Quarantined: live2, Size: 1, Moved: true},
			}}); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(30 * 24 * time.Hour)
	// The scan reports all three; only r-live can be due: r-forever has no
	// purge time and r-evil's manifest is refused.
	runs := scanQuarantine(nil, tbl.Location(), tbl.Metadata().TableUUID().String(), nil, nil)
	byID := map[string]diff.QuarantineRun{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	if len(runs) != 3 || byID["r-forever"].PurgeAfterMs != 0 || !strings.Contains(byID["r-evil"].Problem, "outside the run") || byID["r-live"].Problem != "" {
		t.Fatalf("scan %+v", runs)
	}
	if due := diff.DuePurgeRuns(runs, now); len(due) != 1 || due[0].RunID != "r-live" {
		t.Fatalf("due %+v", due)
	}
	// Apply re-checks what a plan lists (a saved plan is data too): all
	// three listed, none purged.
	var all []diff.PurgeRun
	for _, r := range runs {
		all = append(all, diff.PurgeRun{RunID: r.RunID, ManifestDigest: r.ManifestDigest})
	}
	res, err := Remove(ctx, l.Cat, tbl, Spec{OlderThan: 72 * time.Hour, Now: now, QuarantineFor: time.Hour, PurgeRuns: all})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Note, "r-forever: not due, kept") {
		t.Fatalf("note %q", res.Note)
	}
	if !strings.Contains(res.Note, "r-live: the table references") || !strings.Contains(res.Note, "r-evil: manifest names files outside the run") || strings.Contains(res.Note, "purged") || res.FilesDeleted != 0 {
		t.Fatalf("note %q, deleted %d", res.Note, res.FilesDeleted)
	}
	for _, p := range []string{q, q2, q3, live2} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s purged", p)
		}
	}
}

// TestRestoreRefusesManifestOutsideTable: the manifest is data on storage;
// one that points outside the table's locations moves nothing.
func TestRestoreRefusesManifestOutsideTable(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	runDir := filepath.Join(root, QuarantineDir, "evil")
	q := writeOld(t, filepath.Join(runDir, "x.parquet"), "x", time.Now())
	outside := filepath.Join(l.Dir, "escaped.parquet")
	elsewhere := writeOld(t, filepath.Join(l.Dir, "elsewhere.parquet"), "e", time.Now())
	if err := writeQuarantineManifest(nil, root, filepath.Join(runDir, QuarantineManifestName), QuarantineManifest{
		RunID: "evil", TableUUID: tbl.Metadata().TableUUID().String(),
		Files: []diff.QuarantinedFile{
			{Original: outside, Quarantined: q, Moved: true},
			{Original: filepath.Join(root, "data", "y.parquet"), Quarantined: elsewhere, Moved: true},
			{Original: filepath.Join(root, "data", "..", "..", "z.parquet"), Quarantined: q, Moved: true},
		}}); err != nil {
		t.Fatal(err)
	}
	sess := openSession(t, l.Config())
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", "evil")
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 0 || len(rr.Refused) != 3 {
		t.Fatalf("restore %+v", rr)
	}
	for _, p := range []string{q, elsewhere} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s moved", p)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatal("a file was written outside the table")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if bv, ok := b[k]; !ok || bv != a[k] {
			return false
		}
	}
	return true
}

// TestRemoveOrphanFilesInterruptedStopsAtBatch: an interruption lets the
// running batch finish and starts no other; the rest are reported as not
// deleted (they stay orphans for the next run).
func TestRemoveOrphanFilesInterruptedStopsAtBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	var paths []string
	for i := range 6 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", "s"+string(rune('0'+i))+".parquet"), "x", now.Add(-10*24*time.Hour)))
	}
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: now, BatchSize: 2, DeleteConcurrency: 1}
	spec.remove = func(p string) error {
		cancel() // the interrupt arrives during the first batch
		return os.Remove(p)
	}
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 2 || len(res.DeleteErrors) != 4 || !strings.Contains(res.DeleteErrors[0], "still in place: not started: context canceled") {
		t.Fatalf("deleted %d, errors %v", res.FilesDeleted, res.DeleteErrors)
	}
	left := 0
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			left++
		}
	}
	if left != 4 {
		t.Fatalf("%d files left, want 4", left)
	}
}

// plannedRuns is what a plan at now would list for tbl's quarantine: the
// scan's reading of the manifests, then diff's choice of the due runs.
func plannedRuns(t *testing.T, tbl *table.Table, now time.Time) []diff.PurgeRun {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return diff.DuePurgeRuns(scanQuarantine(fs, tbl.Location(), tbl.Metadata().TableUUID().String(), nil, nil), now)
}

// TestOrphanScanReadsQuarantineRuns: the plan's scan reports each
// quarantine run from its manifest (counts, purge time, digest of the
// manifest's bytes); a run whose manifest is unreadable or missing is
// reported with the problem, never fatal; quarantined files are not
// orphan candidates.
func TestOrphanScanReadsQuarantineRuns(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 2, 10, 1)
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	a := writeOld(t, filepath.Join(loc, "data", "a.parquet"), "aaaa", t0.Add(-10*24*time.Hour))
	res, err := Remove(ctx, l.Catalog, tbl, Spec{Paths: []string{a}, OlderThan: 72 * time.Hour, Now: t0,
		Quarantine: true, QuarantineFor: 7 * 24 * time.Hour})
	if err != nil || res.FilesQuarantined != 1 {
		t.Fatalf("quarantine %+v %v", res, err)
	}
	qroot := filepath.Join(loc, QuarantineDir)
	writeOld(t, filepath.Join(qroot, "broken", QuarantineManifestName), "{not json", t0)
	writeOld(t, filepath.Join(qroot, "bare", "data", "x.parquet"), "x", t0)

	sess := sessionFor(t, l)
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	run := newRunID(t0)
	raw, err := os.ReadFile(filepath.Join(qroot, run, QuarantineManifestName))
	if err != nil {
		t.Fatal(err)
	}
	want := []diff.QuarantineRun{
		{RunID: run, Files: 1, Bytes: 4, CreatedAtMs: t0.UnixMilli(), PurgeAfterMs: t0.Add(7 * 24 * time.Hour).UnixMilli(), ManifestDigest: manifestDigest(raw)},
	}
	var problems []string
	for _, r := range scan.Quarantine {
		if r.Problem != "" {
			problems = append(problems, r.RunID+": "+r.Problem)
			continue
		}
		if len(want) == 0 || !reflect.DeepEqual(r, want[0]) {
			t.Fatalf("run %+v, want %+v", r, want)
		}
		want = want[1:]
	}
	slices.Sort(problems)
	if len(want) != 0 || len(problems) != 2 || !strings.HasPrefix(problems[0], "bare: no manifest") || !strings.HasPrefix(problems[1], "broken: manifest unreadable") {
		t.Fatalf("runs %+v", scan.Quarantine)
	}
	if len(scan.Candidates)+len(scan.NonIceberg) != 0 {
		t.Fatalf("quarantined files listed as orphans: %v %v", scan.Candidates, scan.NonIceberg)
	}
	if due := diff.DuePurgeRuns(scan.Quarantine, t0.Add(30*24*time.Hour)); len(due) != 1 || due[0].RunID != run {
		t.Fatalf("due %+v", due)
	}
}

// TestQuarantineRunHoldingManyLiveFiles: when more referenced files are
// missing from the listing than the scan names (maxMissingReported), a run
// holding some of them says its count is a lower bound.
func TestQuarantineRunHoldingManyLiveFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), maxMissingReported+4, 5, maxMissingReported+4)
	live := testkit.DataFiles(t, tbl)
	if len(live) <= maxMissingReported {
		t.Fatalf("setup: %d data files", len(live))
	}
	root := strings.TrimPrefix(tbl.Location(), "file://")
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	runDir := filepath.Join(root, QuarantineDir, "r-many")
	man := QuarantineManifest{RunID: "r-many", TableUUID: tbl.Metadata().TableUUID().String(), CreatedAt: t0, PurgeAfter: t0.Add(time.Hour)}
	for i, p := range live {
		q := filepath.Join(runDir, "data", fmt.Sprintf("%03d.parquet", i))
		if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(strings.TrimPrefix(p, "file://"), q); err != nil {
			t.Fatal(err)
		}
		man.Files = append(man.Files, diff.QuarantinedFile{Original: p, Quarantined: "file://" + q, Size: 1, Moved: true})
	}
	if err := writeQuarantineManifest(nil, root, filepath.Join(runDir, QuarantineManifestName), man); err != nil {
		t.Fatal(err)
	}
	scan, err := sessionFor(t, l).scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.t"), tbl, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if scan.MissingReferencedCount != int64(len(live)) || len(scan.MissingReferenced) != maxMissingReported {
		t.Fatalf("missing %d, named %d", scan.MissingReferencedCount, len(scan.MissingReferenced))
	}
	if len(scan.Quarantine) != 1 {
		t.Fatalf("runs %+v", scan.Quarantine)
	}
	r := scan.Quarantine[0]
	if len(r.Referenced) != maxMissingReported || !scan.MissingUnnamed() {
		t.Fatalf("run names %d referenced files, unnamed missing = %v", len(r.Referenced), scan.MissingUnnamed())
	}
	if why := r.StuckReason("lake.ns.t", scan.MissingUnnamed()); !strings.HasPrefix(why, fmt.Sprintf("at least %d files of this run are referenced", maxMissingReported)) {
		t.Fatalf("reason %q", why)
	}
}

// TestRestoreFinishesAnInterruptedMove (issue 13.9): a restore stopped
// between its hard link and its unlink leaves the file under both names;
// the next restore sees one inode, not a file in the way, and finishes.
func TestRestoreFinishesAnInterruptedMove(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := t0.Add(-10 * 24 * time.Hour)
	a := writeOld(t, filepath.Join(root, "data", "a.parquet"), "aaaa", old)
	res, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{a}, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 7 * 24 * time.Hour})
	if err != nil || res.FilesQuarantined != 1 {
		t.Fatalf("quarantine %+v %v", res, err)
	}
	run := newRunID(t0)
	q := filepath.Join(root, QuarantineDir, run, "data", "a.parquet")
	if err := os.Link(q, a); err != nil { // the link landed, the unlink did not
		t.Fatal(err)
	}
	sess := openSession(t, l.Config())
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	if err != nil || len(rr.Restored) != 1 || len(rr.Refused) != 0 {
		t.Fatalf("restore %+v %v", rr, err)
	}
	if got, err := os.ReadFile(a); err != nil || string(got) != "aaaa" {
		t.Fatalf("restored file %q %v", got, err)
	}
	if _, err := os.Lstat(q); !os.IsNotExist(err) {
		t.Fatalf("the quarantine still names the file: %v", err)
	}
}
