package compaction

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/iceops/iceops/providers/internal/lakehouse"
	"github.com/iceops/iceops/providers/testkit"
)

// TestJavaEqualityDeletes: tables whose equality delete files were written by
// Java Iceberg 1.8.1 (Spark 3.5.1 appends, Iceberg Java API deletes; copied
// from duckdb/duckdb-iceberg, see testdata/duckdb_eqdel_spark/README.md)
// compact, and their live rows are unchanged. The expected rows are not
// iceberg-go's reading: they are the ones DuckDB's test suite asserts for the
// same files (test/sql/local/equality_deletes.test), so a reader that ignored the deletes would
// fail here before the compaction is even checked.
func TestJavaEqualityDeletes(t *testing.T) {
	cases := []struct {
		dir  string
		want []string // DuckDB's result, rendered like rowStrings
	}{
		{"mytable", []string{"4|d|2025-01-04|", "5|e|2025-01-05|"}},
		{"mytable_partitioned", []string{"1|a|2025-01-01|", "4|d|2025-01-04|", "5|e|2025-01-05|"}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			l := testkit.NewLakehouse(t, t.TempDir(), "lake")
			loc, err := lakehouse.CopyFixture(filepath.Join("testdata", "duckdb_eqdel_spark", tc.dir), filepath.Join(l.Warehouse, "java", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			name := "java." + tc.dir
			tbl := l.RegisterSQL(t, name, loc)
			if _, eq, _ := countDeletes(liveTasks(t, tbl)); eq == 0 {
				t.Fatal("setup: the table has no live equality delete file")
			}
			before := rowStrings(t, tbl)
			t.Logf("live rows before: %q", before)
			if !slices.Equal(before, tc.want) {
				t.Fatalf("iceberg-go reads %q, DuckDB's suite says %q", before, tc.want)
			}
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Catalog: l.Catalog})
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed() == 0 {
				t.Fatal("nothing committed")
			}
			after := l.Reload(t, name)
			requireSameRows(t, before, rowStrings(t, after))
			if p, e, d := countDeletes(liveTasks(t, after)); p+e+d != 0 {
				t.Fatalf("delete files left: %d position, %d equality, %d DVs", p, e, d)
			}
		})
	}
}
