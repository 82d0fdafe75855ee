package compaction

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/testkit"
)

// TestJavaEqualityDeletes: tables whose equality delete files were written by
// Java Iceberg 1.8.1 (Spark 3.5.1 appends, Iceberg Java API deletes; copied
// from duckdb/duckdb-iceberg, see testdata/duckdb_eqdel_spark/README.md)
// compact, and their live rows are unchanged. The expected rows are not
// iceberg-go's reading: they are the ones DuckDB's test suite asserts for the
// same files (test/sql/local/equality_deletes.test), so a reader that
// ignored the deletes would fail here before the compaction is checked.
func TestJavaEqualityDeletes(t *testing.T) {
	ForEachJavaTable(t, func(t *testing.T, l *testkit.Lakehouse, tbl *table.Table) *table.Table {
		res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Catalog: l.Catalog})
		if err != nil {
			t.Fatal(err)
		}
		if res.Committed() == 0 {
			t.Fatal("nothing committed")
		}
		return l.Reload(t, strings.Join(tbl.Identifier(), "."))
	})
}

// JavaTable is a Java-written test table and its live rows.
type JavaTable struct {
	Dir  string
	Want []string
}

// JavaEqualityDeleteTables are the tables of testdata/duckdb_eqdel_spark with
// the live rows DuckDB's suite asserts for them, rendered like rowStrings.
var JavaEqualityDeleteTables = []JavaTable{
	{"mytable", []string{"4|d|2025-01-04|", "5|e|2025-01-05|"}},
	{"mytable_partitioned", []string{"1|a|2025-01-01|", "4|d|2025-01-04|", "5|e|2025-01-05|"}},
}

// ForEachJavaTable runs, for each of them in a subtest, compact on a fresh
// copy (paths rewritten) registered as java.<dir> in a new lakehouse, after
// checking that the copy has a live equality delete file and that
// iceberg-go reads DuckDB's rows from it; compact returns the table after
// compacting, whose live rows must be the same and delete files none.
func ForEachJavaTable(t *testing.T, compact func(*testing.T, *testkit.Lakehouse, *table.Table) *table.Table) {
	for _, tc := range JavaEqualityDeleteTables {
		t.Run(tc.Dir, func(t *testing.T) {
			l := testkit.NewLakehouse(t, t.TempDir(), "lake")
			loc, err := lakehouse.CopyFixture(filepath.Join("testdata", "duckdb_eqdel_spark", tc.Dir), filepath.Join(l.Warehouse, "java", tc.Dir))
			if err != nil {
				t.Fatal(err)
			}
			tbl := l.RegisterSQL(t, "java."+tc.Dir, loc)
			if _, eq, _ := countDeletes(liveTasks(t, tbl)); eq == 0 {
				t.Fatal("setup: the table has no live equality delete file")
			}
			before := rowStrings(t, tbl)
			if !slices.Equal(before, tc.Want) {
				t.Fatalf("iceberg-go reads %q, DuckDB's suite says %q", before, tc.Want)
			}
			after := compact(t, l, tbl)
			requireSameRows(t, before, rowStrings(t, after))
			if p, e, d := countDeletes(liveTasks(t, after)); p+e+d != 0 {
				t.Fatalf("delete files left: %d position, %d equality, %d DVs", p, e, d)
			}
		})
	}
}
