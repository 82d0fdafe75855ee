package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/testkit"
)

// TestCLIOtherCatalogNameRefusesSweep: default.t.a, in the same database
// under catalog_name "default", sits at lake.t.a's location. The plan
// refuses lake.t.a's sweep naming it, apply deletes none of its files, and
// it loads and reads the same rows.
func TestCLIOtherCatalogNameRefusesSweep(t *testing.T) {
	bin := buildIcewright(t)
	dir := t.TempDir()
	lake, def := sweepLakes(t, dir)
	lake.Backdate(t, testkit.Append(t, lake.CreateTable(t, "t.a", testkit.TableOptions{}), 2, 20, 1), 10*24*time.Hour)
	other := def.Backdate(t, testkit.Append(t, def.CreateTable(t, "t.a", testkit.TableOptions{}), 3, 25, 1), 10*24*time.Hour)
	rows := testkit.ScanRows(t, other)
	code, out := runIcewright(t, bin, dir, "plan")
	if !strings.Contains(out, `default.t.a (catalog_name "default", in catalog "lake"'s database)`) {
		t.Fatalf("plan: exit %d, want the sweep refused naming default.t.a:\n%s", code, out) // exit 1: a refusal
	}
	code, out = runIcewright(t, bin, dir, "apply", "-auto-approve")
	if got := testkit.ScanRows(t, def.Reload(t, "t.a")); got != rows {
		t.Fatalf("default.t.a reads %d rows after apply (exit %d), had %d:\n%s", got, code, rows, out)
	}
}

// Issue 41 through the command line: a file in lake.t.a's data directory
// that lake.t.b took in with add_files (iceberg-go's, as PyIceberg's and
// Spark's add_files do) survives plan -out and apply of the saved plan, and
// a plain apply -auto-approve, while A's real orphan goes; and table t.a
// under catalog_name "default" in the same database (same location) keeps
// every file and its rows, the plan saying why lake.t.a's sweep is refused.
func TestCLIForeignReferencesKept(t *testing.T) {
	bin := buildIcewright(t)
	for _, saved := range []bool{true, false} {
		dir := t.TempDir()
		lake, def := sweepLakes(t, dir)
		old := time.Now().Add(-10 * 24 * time.Hour)
		a := lake.Backdate(t, testkit.Append(t, lake.CreateTable(t, "t.a", testkit.TableOptions{}), 2, 20, 1), 10*24*time.Hour)
		b := lake.Backdate(t, testkit.Append(t, lake.CreateTable(t, "t.b", testkit.TableOptions{}), 1, 30, 1), 10*24*time.Hour)
		aDir := testkit.LocalPath(t, a.Location())
		export := filepath.Join(aDir, "data", "export-2025.parquet")
		testkit.CopyFileAt(t, testkit.LocalPath(t, testkit.DataFiles(t, b)[0]), export, old)
		txn := b.NewTransaction()
		if err := txn.AddFiles(context.Background(), []string{export}, nil, false); err != nil {
			t.Fatal(err)
		}
		b, err := txn.Commit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		stray := testkit.WriteStray(t, a, "data/00000-0-stray.parquet", 10, old)
		if err := os.Chtimes(export, old, old); err != nil { // add_files read it
			t.Fatal(err)
		}
		// A table under catalog_name "default" in the same database, beside
		// A and B: the plan says so (IW116).
		def.Backdate(t, testkit.Append(t, def.CreateTable(t, "t.c", testkit.TableOptions{}), 2, 10, 1), 10*24*time.Hour)
		rowsB := testkit.ScanRows(t, b)

		var code int
		var out string
		if saved {
			code, out = runIcewright(t, bin, dir, "plan", "-out=saved.plan")
			if code != 0 {
				t.Fatalf("plan: exit %d\n%s", code, out)
			}
			for _, want := range []string{"1 file other tables reference kept", "by lake.t.b", "IW116", `catalog_name "default"`} {
				if !strings.Contains(out, want) {
					t.Fatalf("plan lacks %q:\n%s", want, out)
				}
			}
			code, out = runIcewright(t, bin, dir, "apply", "saved.plan")
		} else {
			code, out = runIcewright(t, bin, dir, "apply", "-auto-approve")
		}
		if code != 0 {
			t.Fatalf("apply (saved %v): exit %d\n%s", saved, code, out)
		}
		if _, err := os.Stat(export); err != nil {
			t.Fatalf("apply (saved %v) deleted lake.t.b's file: %v\n%s", saved, err, out)
		}
		if _, err := os.Stat(stray); err == nil {
			t.Fatalf("apply (saved %v) kept A's orphan:\n%s", saved, out)
		}
		if got := testkit.ScanRows(t, lake.Reload(t, "t.b")); got != rowsB {
			t.Fatalf("lake.t.b reads %d rows, had %d", got, rowsB)
		}
	}
}

// sweepLakes is a sqlite catalog "lake" whose database holds tables under
// catalog_name "default" too, and a configuration that sweeps lake.t.*
// (the issue's).
func sweepLakes(t *testing.T, dir string) (lake, def *testkit.Lakehouse) {
	t.Helper()
	lake = testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	def = testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "default")
	hcl := lake.HCL() + `
policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

tables "lake.t.*" {
  policy = policy.sweep
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return lake, def
}
