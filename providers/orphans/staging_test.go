package orphans_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// The acceptance of issue 32 item 2: a sweep beside other engines' staging
// directories (Hadoop's _temporary/, Hive's .hive-staging_*/, a hidden
// directory inside a partition) on a table partitioned by a field named
// "_day", whose "_day=.../" directories hold its live files and a real
// orphan. Plan and apply delete the orphan alone; the plan reports what it
// did not enter; every other file is byte for byte as before.
func TestOrphanSweepSkipsStagingDirectories(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	must(t, lake.Catalog.CreateNamespace(ctx, []string{"sales"}, nil))
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{3}, FieldID: 1000, Name: "_day", Transform: iceberg.DayTransform{},
	})
	tbl, err := lake.Catalog.CreateTable(ctx, []string{"sales", "staged"}, lakehouse.EventsSchema(),
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	must(t, err)
	tbl = testkit.Append(t, tbl, 2, 10, 2)
	live := testkit.DataFiles(t, tbl)
	if len(live) == 0 || !strings.Contains(live[0], "/_day=") {
		t.Fatalf("data files %v: want them under _day=... directories", live)
	}
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	old := time.Now().Add(-10 * 24 * time.Hour)
	ageAll(t, loc, old)

	orphan := testkit.WriteStray(t, tbl, "data/_day=2026-11-01/00000-9-stray.parquet", 100, old)
	staged := []string{
		testkit.WriteStray(t, tbl, "data/_temporary/0/_temporary/attempt_202611010000_0001_m_000000_0/part-00000.parquet", 11, old),
		testkit.WriteStray(t, tbl, "data/_temporary/0/task_202611010000_0001_m_000001/part-00001.parquet", 12, old),
		testkit.WriteStray(t, tbl, "data/.hive-staging_hive_2026-11-01_10-00-00_1/-ext-10000/000000_0.parquet", 13, old),
		testkit.WriteStray(t, tbl, "data/_day=2026-11-02/_temporary/0/part-00002.parquet", 14, old),
		testkit.WriteStray(t, tbl, "data/_other=1/part-00003.parquet", 15, old), // "_" but no partition field of the table
	}

	must(t, os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(lake.HCL()+`
policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

table "lake.sales.staged" {
  policy = policy.sweep
}
`), 0o644))
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sess := providers.Open(cfg, providers.Options{})
	t.Cleanup(func() { _ = sess.Close() })
	rows := testkit.ScanRows(t, tbl)
	before := treeOf(t, dir)

	plan, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "test"})
	must(t, err)
	if len(plan.Errors) > 0 {
		t.Fatalf("plan errors: %v", plan.Errors)
	}
	tp := planOf(t, plan, "lake.sales.staged")
	o := orphansOf(tp)
	if o == nil {
		t.Fatalf("no orphan action (refusals %v)", tp.Refusals)
	}
	if !slices.Equal(o.Paths, []string{orphan}) {
		t.Fatalf("plan paths %v, want only %s", o.Paths, orphan)
	}
	st := o.Staging
	if st == nil {
		t.Fatal("the plan does not report the staging directories it left")
	}
	data := filepath.Join(loc, "data")
	wantDirs := []string{
		filepath.Join(data, ".hive-staging_hive_2026-11-01_10-00-00_1"),
		filepath.Join(data, "_day=2026-11-02", "_temporary"),
		filepath.Join(data, "_other=1"),
		filepath.Join(data, "_temporary"),
	}
	if st.Dirs != 4 || st.Files != 5 || st.Bytes != 11+12+13+14+15 || !slices.Equal(st.Examples, wantDirs) {
		t.Fatalf("staging report %+v, want 4 directories %v, 5 files, 65 bytes", st, wantDirs)
	}

	res, err := apply.Apply(ctx, cfg, sess, plan, apply.ApplyOptions{Version: "test"})
	must(t, err)
	if ar := actionResult(t, res, "lake.sales.staged"); ar.FilesDeleted != 1 || len(ar.DeleteErrors) > 0 {
		t.Fatalf("result %+v", ar)
	}
	want := maps.Clone(before)
	rel, _ := filepath.Rel(dir, orphan)
	delete(want, rel)
	if after := treeOf(t, dir); !maps.Equal(after, want) {
		t.Fatalf("apply changed more than the orphan:\n got %v\nwant %v", after, want)
	}
	for _, p := range append(staged, live...) {
		if _, err := os.Stat(strings.TrimPrefix(p, "file://")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if got := testkit.ScanRows(t, lake.Reload(t, "sales.staged")); got != rows {
		t.Fatalf("reads %d rows, want %d", got, rows)
	}
}
