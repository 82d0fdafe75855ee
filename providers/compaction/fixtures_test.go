package compaction

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/testkit"
)

// Spark-written tables (not ours) compact with their live rows unchanged.
// On the v2 ones we first add equality deletes (iceberg-go writes them; the
// data files stay Spark's), so the Java-written data is read through
// equality deletes, sorted on a decimal and a long, and the dead equality
// deletes go away with the rewrite.
func TestSparkFixtures(t *testing.T) {
	for _, fx := range testkit.Fixtures {
		t.Run(fx, func(t *testing.T) {
			l := testkit.NewLakehouse(t, t.TempDir(), "lake")
			name := "spark." + strings.ReplaceAll(fx, "-", "_")
			tbl := l.AddFixture(t, fx, name)
			eqDeletes := tbl.Metadata().Version() >= 2 && tbl.Spec().IsUnpartitioned()
			if eqDeletes {
				tbl = deleteOrderKeys(t, tbl, 7)
				if _, eq, _ := countDeletes(liveTasks(t, tbl)); eq == 0 {
					t.Fatal("setup: no equality delete on the fixture")
				}
			}
			before := rowStrings(t, tbl)
			if len(before) == 0 {
				t.Fatal("setup: fixture has no rows")
			}
			order := sortOrderPtr(t, []table.SortField{
				{SourceIDs: []int{6}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
				{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast},
			})
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
				Strategy: Sort, SortOrder: order, TargetFileSize: 64 << 10, Catalog: l.Catalog,
			})
			if err != nil {
				t.Fatal(err)
			}
			after := l.Reload(t, name)
			requireSameRows(t, before, rowStrings(t, after))
			if p, e, d := countDeletes(liveTasks(t, after)); p+e+d != 0 {
				t.Fatalf("delete files left: %d position, %d equality, %d DVs", p, e, d)
			}
			for _, task := range liveTasks(t, after) {
				if c := codecOf(t, after, task.File.FilePath()); c != "zstd" {
					t.Fatalf("%s written with %s, the table says zstd", task.File.FilePath(), c)
				}
			}
			if res.Committed() == 0 {
				t.Fatal("nothing committed")
			}
		})
	}
}

// deleteOrderKeys commits an equality delete on l_orderkey for every key
// divisible by mod.
func deleteOrderKeys(t testing.TB, tbl *table.Table, mod int64) *table.Table {
	t.Helper()
	_, it, err := tbl.Scan(table.WithSelectedFields("l_orderkey")).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[int64]bool{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := rec.Column(0).(*array.Int64)
		for i := range col.Len() {
			if col.Value(i)%mod == 0 {
				keys[col.Value(i)] = true
			}
		}
		rec.Release()
	}
	field := arrow.Field{Name: "l_orderkey", Type: arrow.PrimitiveTypes.Int64, Nullable: true,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for k := range keys {
		b.Append(k)
	}
	arr := b.NewInt64Array()
	b.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{field}, nil), []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	defer rec.Release()
	txn := tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(context.Background(), []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil); err != nil {
		t.Fatal(err)
	}
	next, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return next
}
