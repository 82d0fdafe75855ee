package apply

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/diff/planfile"
	"github.com/icewright/icewright/providers/doctor"
	"github.com/icewright/icewright/providers/testkit"
)

// Issue 41 (nothing foreign is deleted): files other tables reference, and
// tables under another catalog name in the catalog's database.

// sweepOnlyHCL manages lake.t.* with an orphan sweep alone, as the issue's
// user configured it.
const sweepOnlyHCL = `
policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

tables "lake.t.*" {
  policy = policy.sweep
}
`

// maintainHCL manages lake.t.* with compaction and expiry.
const maintainHCL = `
policy "maintain" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "2d"
    min_snapshots = 1
  }
}

tables "lake.t.*" {
  policy = policy.maintain
}
`

// localPath is a table path without its file:// scheme.
func localPath(p string) string { return strings.TrimPrefix(p, "file://") }

// addFiles commits paths into tbl with iceberg-go's add_files (the file's
// own footer gives its statistics), as PyIceberg's and Spark's add_files do.
func addFiles(t *testing.T, tbl *table.Table, paths ...string) *table.Table {
	t.Helper()
	txn := tbl.NewTransaction()
	if err := txn.AddFiles(context.Background(), paths, nil, false); err != nil {
		t.Fatalf("add_files %v: %v", paths, err)
	}
	next, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatalf("add_files %v: %v", paths, err)
	}
	return next
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestSweepKeepsFilesOtherTablesReference: table B took in, with
// add_files, a 10-day-old Parquet file staged in table A's data directory.
// A's sweep plans A's real orphan and not B's file (the plan says which
// table keeps it), and apply deletes the orphan and keeps B's file: by a
// plain apply, and by a saved plan applied in a new run that lists B's
// file (an older icewright's plan), which apply's re-check keeps. B reads
// the same rows after each.
func TestSweepKeepsFilesOtherTablesReference(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(map[bool]string{false: "apply", true: "saved plan"}[saved], func(t *testing.T) {
			e := newEnv(t, "")
			e.writeConfig(e.lake.HCL() + sweepOnlyHCL)
			old := time.Now().Add(-10 * 24 * time.Hour)
			a := e.lake.CreateTable(t, "t.a", testkit.TableOptions{})
			a = testkit.Append(t, a, 2, 20, 1)
			a = e.lake.Backdate(t, a, 10*24*time.Hour)
			b := e.lake.CreateTable(t, "t.b", testkit.TableOptions{})
			b = testkit.Append(t, b, 1, 30, 1)
			b = e.lake.Backdate(t, b, 10*24*time.Hour)

			export := filepath.Join(localPath(a.Location()), "data", "export-2025.parquet")
			testkit.CopyFileAt(t, localPath(testkit.DataFiles(t, b)[0]), export, time.Now())
			b = addFiles(t, b, export)
			if err := os.Chtimes(export, old, old); err != nil {
				t.Fatal(err)
			}
			rowsB := testkit.ScanRows(t, b)
			stray := strayFile(t, a, "00000-0-stray.parquet", 10*24*time.Hour)

			p := e.plan()
			act := actionOf(tablePlan(t, p, "lake.t.a"), diff.RemoveOrphanFiles)
			if act == nil {
				t.Fatalf("no sweep of lake.t.a planned: %+v", tablePlan(t, p, "lake.t.a"))
			}
			o := act.Orphans
			if slices.Contains(o.Paths, export) || !slices.Contains(o.Paths, stray) {
				t.Fatalf("planned paths %v: want %s and not %s", o.Paths, stray, export)
			}
			if o.Foreign == nil || o.Foreign.Files != 1 || !slices.Equal(o.Foreign.Tables, []string{"lake.t.b"}) {
				t.Fatalf("the plan does not say lake.t.b keeps a file: %+v", o.Foreign)
			}
			if saved {
				// A plan that lists B's file (made before the rule), saved,
				// then applied by a new run.
				st, err := os.Stat(export)
				if err != nil {
					t.Fatal(err)
				}
				o.Paths = append(o.Paths, export)
				slices.Sort(o.Paths)
				o.Count++
				o.Bytes += st.Size()
				sum, err := planfile.Checksum(p)
				if err != nil {
					t.Fatal(err)
				}
				p.Checksum = sum
				e.writeConfig(e.lake.HCL() + sweepOnlyHCL)
			}
			res := e.apply(p, saved)
			if res.Failed() {
				t.Fatalf("apply failed:\n%s", describe(res))
			}
			if !exists(t, export) {
				t.Fatalf("B's file %s was deleted as A's orphan:\n%s", export, describe(res))
			}
			if exists(t, stray) {
				t.Fatalf("A's orphan %s is still there:\n%s", stray, describe(res))
			}
			b = e.lake.Reload(t, "t.b")
			if got := testkit.ScanRows(t, b); got != rowsB {
				t.Fatalf("B reads %d rows, had %d", got, rowsB)
			}
			checkReferencedExist(t, b)
		})
	}
}

// TestExpiryKeepsFilesOtherTablesReference: B took in one of A's data
// files with add_files. A's compaction replaces it and A's expiry then
// releases it: it stays, and B reads the same rows.
func TestExpiryKeepsFilesOtherTablesReference(t *testing.T) {
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + maintainHCL)
	a := e.lake.CreateTable(t, "t.a", testkit.TableOptions{})
	a = testkit.Append(t, a, 6, 20, 1)
	a = e.lake.Backdate(t, a, 10*24*time.Hour)
	shared := localPath(testkit.DataFiles(t, a)[0])
	b := e.lake.CreateTable(t, "t.b", testkit.TableOptions{})
	b = addFiles(t, b, shared)
	rowsB := testkit.ScanRows(t, b)

	// The first apply compacts A (shared is replaced); the second, once the
	// compacted-away snapshot has aged, expires what still reached it.
	for round := range 2 {
		if round == 1 {
			e.lake.Backdate(t, e.lake.Reload(t, "t.a"), 10*24*time.Hour)
		}
		p := e.plan()
		res := e.apply(p, false)
		if res.Failed() {
			t.Fatalf("round %d: apply failed:\n%s", round, describe(res))
		}
	}
	after := e.lake.Reload(t, "t.a")
	if slices.Contains(testkit.DataFiles(t, after), shared) || slices.Contains(testkit.DataFiles(t, after), "file://"+shared) {
		t.Fatalf("A still has %s live: the test did not compact it away", shared)
	}
	if got := len(after.Metadata().Snapshots()); got != 1 {
		t.Fatalf("A has %d snapshots after two rounds: the test did not expire the old ones", got)
	}
	if !exists(t, shared) {
		t.Fatalf("A's expiry deleted %s, which lake.t.b references", shared)
	}
	b = e.lake.Reload(t, "t.b")
	if got := testkit.ScanRows(t, b); got != rowsB {
		t.Fatalf("B reads %d rows, had %d", got, rowsB)
	}
	checkReferencedExist(t, b)
	checkReferencedExist(t, after)
}

// TestSweepSeesOtherCatalogNameInDatabase: the catalog's database holds
// table t.a under catalog_name "default" too (PyIceberg's default name),
// at the same location as lake.t.a. The sweep of lake.t.a is refused in the
// plan, naming the other table and its catalog name, and no apply touches
// default.t.a, which loads and reads the same rows.
func TestSweepSeesOtherCatalogNameInDatabase(t *testing.T) {
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + sweepOnlyHCL)
	def := testkit.NewLakehouse(t, e.lake.Dir, "default")
	a := e.lake.CreateTable(t, "t.a", testkit.TableOptions{})
	a = testkit.Append(t, a, 2, 20, 1)
	e.lake.Backdate(t, a, 10*24*time.Hour)
	other := def.CreateTable(t, "t.a", testkit.TableOptions{})
	other = testkit.Append(t, other, 3, 25, 1)
	other = def.Backdate(t, other, 10*24*time.Hour)
	if localPath(other.Location()) != localPath(a.Location()) {
		t.Fatalf("setup: locations differ: %s and %s", other.Location(), a.Location())
	}
	rows := testkit.ScanRows(t, other)

	p := e.plan()
	tp := tablePlan(t, p, "lake.t.a")
	if actionOf(tp, diff.RemoveOrphanFiles) != nil {
		t.Fatalf("lake.t.a's sweep planned over default.t.a's files: %+v", tp.Actions)
	}
	i := slices.IndexFunc(tp.Refusals, func(r diff.Refusal) bool { return r.Action == string(diff.RemoveOrphanFiles) })
	if i < 0 || !strings.Contains(tp.Refusals[i].Reason, `default.t.a (catalog_name "default", in catalog "lake"'s database)`) {
		t.Fatalf("no refusal naming default.t.a and its catalog name: %+v", tp.Refusals)
	}
	if !slices.ContainsFunc(p.Warnings, func(w diff.Warning) bool {
		return w.Code == diff.WarnCatalogNameShared && strings.Contains(w.Message, `catalog_name "default"`)
	}) {
		t.Fatalf("the plan does not say another catalog name shares the database: %+v", p.Warnings)
	}
	doc, err := doctor.Run(context.Background(), e.sess, doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(doc.Findings, func(f diff.DoctorFinding) bool {
		return f.Check == "catalog names" && strings.Contains(f.Message, `catalog_name "default"`)
	}) {
		t.Fatalf("doctor does not say another catalog name shares the database: %+v", doc.Findings)
	}
	res := e.apply(p, false)
	_ = res // the refusal fails the table; what matters is the other table
	other = def.Reload(t, "t.a")
	if got := testkit.ScanRows(t, other); got != rows {
		t.Fatalf("default.t.a reads %d rows, had %d", got, rows)
	}
	checkReferencedExist(t, other)
}
