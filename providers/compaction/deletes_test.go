package compaction

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func countDeletes(tasks []table.FileScanTask) (pos, eq, dv int) {
	seen := map[string]bool{}
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			if !seen[d.FilePath()] {
				seen[d.FilePath()] = true
				pos++
			}
		}
		for _, d := range t.EqualityDeleteFiles {
			if !seen[d.FilePath()] {
				seen[d.FilePath()] = true
				eq++
			}
		}
		for _, d := range t.DeletionVectorFiles {
			if !seen[d.FilePath()] {
				seen[d.FilePath()] = true
				dv++
			}
		}
	}
	return pos, eq, dv
}

func TestPositionDeletesAppliedAndRemoved(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unpartitioned", true: "partitioned"}[partitioned], func(t *testing.T) {
			env := newEnv(t)
			tbl := env.create(t, tableSpec{name: "pd", partitioned: partitioned,
				props: iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
			tbl = appendMany(t, tbl, 6, 3000, regions)
			var err error
			tbl, err = tbl.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("x"), int32(-300)), nil)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err = tbl.Delete(context.Background(), iceberg.GreaterThan(iceberg.Reference("y"), int32(90000)), nil)
			if err != nil {
				t.Fatal(err)
			}
			pos, _, _ := countDeletes(liveTasks(t, tbl))
			if pos == 0 {
				t.Fatal("setup: merge-on-read delete wrote no position delete files")
			}
			before := rowStrings(t, tbl)
			if len(before) >= 18000 {
				t.Fatalf("setup: deletes removed nothing (%d rows)", len(before))
			}

			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Binpack, TargetFileSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			requireSameRows(t, before, rowStrings(t, res.Table))
			if p, e, d := countDeletes(liveTasks(t, res.Table)); p+e+d != 0 {
				t.Fatalf("dead delete files kept: %d position, %d equality, %d DVs", p, e, d)
			}
			var in, out int64
			for _, g := range res.Groups {
				in += g.InputRows
				out += g.OutputRows
			}
			if in != int64(len(before)) || out != in {
				t.Fatalf("live rows read %d, written %d, table has %d", in, out, len(before))
			}
		})
	}
}

func TestEqualityDeletesAppliedAndRemoved(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "eqd"})
	tbl = appendMany(t, tbl, 5, 2000, regions)

	// Delete every id divisible by 7 through an equality delete on id.
	idField := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: false,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}
	sc := arrow.NewSchema([]arrow.Field{idField}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for id := int64(0); id < 10000; id += 7 {
		b.Append(id)
	}
	ids := b.NewInt64Array()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{ids}, int64(ids.Len()))
	ids.Release()
	records := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	txn := tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(context.Background(), []int{1}, records, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, eq, _ := countDeletes(liveTasks(t, tbl)); eq == 0 {
		t.Fatal("setup: no equality delete file")
	}
	before := rowStrings(t, tbl)
	if want := 10000 - 1429; len(before) != want {
		t.Fatalf("setup: %d live rows, want %d", len(before), want)
	}

	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Sort, TargetFileSize: 1 << 20,
		SortOrder: sortOrderPtr(t, testOrder())})
	if errors.Is(err, ErrRefused) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, rowStrings(t, res.Table))
	if _, eq, _ := countDeletes(liveTasks(t, res.Table)); eq != 0 {
		t.Fatalf("%d dead equality delete files kept", eq)
	}
	if s := res.Table.CurrentSnapshot().Summary; s.Properties["removed-equality-delete-files"] != "1" {
		t.Fatalf("replace snapshot should remove the equality delete file: %v", s.Properties)
	}
}

func sortOrderPtr(t testing.TB, fields []table.SortField) *table.SortOrder {
	t.Helper()
	so, err := table.NewSortOrder(1, fields)
	if err != nil {
		t.Fatal(err)
	}
	return &so
}
