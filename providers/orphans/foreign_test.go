package orphans

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// Issue 41 item 4: table B's location is spelled through a symbolic link
// into table A's data directory, so B's files lie in A's directory under
// names A's listing sees (it follows no link). A's sweep is refused in the
// plan naming B, by comparing resolved paths; apply's re-check refuses by
// the same rule; B's files stay.
func TestSweepComparesResolvedLocations(t *testing.T) {
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	a := testkit.Append(t, l.CreateTable(t, "t.a", testkit.TableOptions{}), 2, 10, 1)
	aData := filepath.Join(localOf(a.Location()), "data")
	link := filepath.Join(l.Warehouse, "exports")
	if err := os.Symlink(aData, link); err != nil {
		t.Fatal(err)
	}
	b := testkit.Append(t, l.CreateTable(t, "t.b", testkit.TableOptions{Location: filepath.Join(link, "b")}), 2, 10, 1)
	rows := testkit.ScanRows(t, b)
	// B's files as A's listing names them.
	var inA []string
	for _, p := range tableFiles(t, b) {
		if rel, ok := strings.CutPrefix(p, link+"/"); ok {
			inA = append(inA, filepath.Join(aData, rel))
		}
	}
	if len(inA) == 0 {
		t.Fatal("setup: none of B's files lies under the link")
	}

	sess := sessionFor(t, l)
	_, tp := planSweep(t, sess, testkit.OrphanPolicy("lake.t.a"), a)
	refusedNaming(t, tp, "lake.t.b")
	applyOther(t, sess, l, "lake.t.a", a, inA, "lake.t.b")
	for _, p := range inA {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("B's file %s: %v", p, err)
		}
	}
	if got := testkit.ScanRows(t, l.Reload(t, "t.b")); got != rows {
		t.Fatalf("B reads %d rows, had %d", got, rows)
	}
}

// A table the run cannot read (its metadata behind a link to nothing) could
// hold files anywhere on its storage: the sweep of a table on that storage
// is refused in the plan and at apply, naming it.
func TestSweepRefusedForUnreadableTable(t *testing.T) {
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	a := testkit.Append(t, l.CreateTable(t, "t.a", testkit.TableOptions{}), 2, 10, 1)
	dir := filepath.Join(t.TempDir(), "c")
	testkit.Append(t, l.CreateTable(t, "t.c", testkit.TableOptions{Location: dir}), 1, 10, 1)
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere"), dir); err != nil {
		t.Fatal(err)
	}
	sess := sessionFor(t, l)
	_, tp := planSweep(t, sess, testkit.OrphanPolicy("lake.t.a"), a)
	refusedNaming(t, tp, "lake.t.c")
	stray := testkit.WriteStray(t, a, "data/00000-0-stray.parquet", 10, fixedNow.AddDate(0, 0, -30))
	applyOther(t, sess, l, "lake.t.a", a, []string{stray}, "lake.t.c")
}

// The index answers a sweep by path prefix: the files other tables
// reference under its roots (by the roots' resolved spelling too, given
// back in the roots' own), never the sweeping table's own, and nothing
// beside the roots.
func TestTablesForeignUnder(t *testing.T) {
	ts := NewTables(map[string]TableLocation{
		"c.b": {Location: "s3://bk/b", Foreign: []string{"s3://bk/a/data/x.parquet", "s3://bk/ab/y.parquet", "s3://bk/real/z.parquet"}},
		"c.a": {Location: "s3://bk/a", Foreign: []string{"s3://bk/a/data/own.parquet"}},
		"c.d": {Location: "s3://bk/d", Foreign: []string{"s3a://bk/a/data/w.parquet"}},
	})
	if err := ts.ReadReferences(context.Background(), "c.a"); err != nil {
		t.Fatal(err)
	}
	got := ts.foreignUnder("c.a", []string{"s3://bk/a", "s3://bk/link"}, []string{"", "s3://bk/real"}, store.NormPath, false)
	want := map[string]string{"s3://bk/a/data/x.parquet": "c.b", "s3://bk/a/data/w.parquet": "c.d", "s3://bk/link/z.parquet": "c.b"}
	if len(got) != len(want) {
		t.Fatalf("foreignUnder = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("foreignUnder = %v, want %v", got, want)
		}
	}
	if o := ts.ReferencedBy("c.a", "s3a://bk/a/data/x.parquet"); o != "c.b" {
		t.Fatalf("ReferencedBy = %q", o)
	}
	if o := ts.ReferencedBy("c.a", "s3://bk/a/data/own.parquet"); o != "" {
		t.Fatalf("ReferencedBy of the table's own = %q", o)
	}
	if names := slices.Collect(func(yield func(string) bool) {
		for _, n := range NewTables(map[string]TableLocation{"c.u": {Unreadable: "boom"}, "c.v": {Location: "gs://other/v", Unreadable: "no"}}).Unreadable("c.a", []string{"s3://bk/a"}) {
			yield(n)
		}
	}); !slices.Equal(names, []string{"c.u (boom)"}) {
		t.Fatalf("Unreadable = %v", names)
	}
}

// localOf is a local table path without its scheme.
func localOf(p string) string { return strings.TrimPrefix(p, "file://") }

// The first asker's own references are not read (they are never foreign
// to it); a later asker, another table, has them read then, and sees them.
func TestTablesSkipAskersOwn(t *testing.T) {
	locs := map[string]TableLocation{
		"c.a": {Location: "s3://bk/a", Foreign: []string{"s3://bk/b/data/from-a.parquet"}},
		"c.b": {Location: "s3://bk/b", Foreign: []string{"s3://bk/a/data/from-b.parquet"}},
	}
	var asked []string
	ts := LazyTables(map[string]TableLocation{"c.a": {Location: "s3://bk/a"}, "c.b": {Location: "s3://bk/b"}},
		func(_ context.Context, skip string) (map[string]TableLocation, error) {
			asked = append(asked, skip)
			out := map[string]TableLocation{}
			for a, tl := range locs {
				if a != skip {
					out[a] = tl
				}
			}
			return out, nil
		})
	ctx := context.Background()
	if err := ts.ReadReferences(ctx, "c.a"); err != nil {
		t.Fatal(err)
	}
	if o := ts.ReferencedBy("c.a", "s3://bk/a/data/from-b.parquet"); o != "c.b" {
		t.Fatalf("c.a's question: ReferencedBy = %q, want c.b", o)
	}
	if err := ts.ReadReferences(ctx, "c.a"); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "c.a" {
		t.Fatalf("references read with skips %q, want one read skipping c.a", asked)
	}
	// c.b asks: c.a's references are read now, and c.b's file is c.a's.
	if err := ts.ReadReferences(ctx, "c.b"); err != nil {
		t.Fatal(err)
	}
	if o := ts.ReferencedBy("c.b", "s3://bk/b/data/from-a.parquet"); o != "c.a" {
		t.Fatalf("c.b's question after c.a's: ReferencedBy = %q, want c.a", o)
	}
	if got := ts.foreignUnder("c.b", []string{"s3://bk/b"}, []string{""}, store.NormPath, false); got["s3://bk/b/data/from-a.parquet"] != "c.a" {
		t.Fatalf("c.b's sweep: foreignUnder = %v", got)
	}
	if len(asked) != 2 || asked[1] != "" {
		t.Fatalf("references read with skips %q, want c.a then none", asked)
	}
}
