package compaction

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// hiveSchema is a table partitioned by identity(region) and identity(day),
// whose columns are optional as a Hive migration makes them.
func hiveSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "val", Type: iceberg.PrimitiveTypes.Float64},
	)
}

var hiveDay = iceberg.Date(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC).Unix() / 86400)

// writeHiveFile writes ids [first, first+n) as a Parquet file holding only
// id and val (the partition columns live in the directory name, as Hive and
// add_files imports leave them), with field ids or, withIDs false, without
// any (read through the name mapping).
func writeHiveFile(t *testing.T, path string, first int64, n int, withIDs bool) int64 {
	t.Helper()
	md := func(id int) arrow.Metadata {
		if !withIDs {
			return arrow.Metadata{}
		}
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
	}
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(4)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		b.Field(1).(*array.Float64Builder).Append(float64(first+int64(i)) / 4)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return writeParquetFile(t, path, rec)
}

// hiveTable builds region=eu/day=2026-11-03 with one file written by
// iceberg-go (columns present) and three imported files that lack region
// and day: two with field ids, one without (name mapping); then deletes
// two rows of the imported files by position.
func hiveTable(t *testing.T, e *testEnv, name string) *table.Table {
	t.Helper()
	ctx := context.Background()
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "day", Transform: iceberg.IdentityTransform{}},
	)
	tbl, err := e.cat.CreateTable(ctx, table.Identifier{"ns", name}, hiveSchema(),
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	// The native file.
	as, err := table.SchemaToArrowSchema(hiveSchema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("eu")
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(hiveDay))
		b.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
	}
	rec := b.NewRecordBatch()
	b.Release()
	tbl = appendBatch(t, tbl, rec)
	rec.Release()

	// The imported files, under the Hive layout.
	dir := filepath.Join(e.warehouse, "hive", "region=eu", "day=2026-11-03")
	var files []iceberg.DataFile
	for i, withIDs := range []bool{true, true, false} {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		first := int64(100 * (i + 1))
		size := writeHiveFile(t, p, first, 20, withIDs)
		bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file://"+p, iceberg.ParquetFile,
			map[int]any{1000: "eu", 1001: hiveDay}, nil, nil, 20, size)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, bld.Build())
	}
	txn := tbl.NewTransaction()
	if err := txn.AddDataFiles(ctx, files, nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if tbl.Properties()[table.DefaultNameMappingKey] == "" {
		t.Fatal("AddDataFiles set no name mapping; the name-mapped file would be unreadable")
	}
	txn = tbl.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"write.delete.mode": "merge-on-read"}); err != nil {
		t.Fatal(err)
	}
	if tbl, err = txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tbl.Delete(ctx, iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(105)),
		iceberg.LessThan(iceberg.Reference("id"), int64(107))), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(liveTasks(t, tbl)); n != 4 {
		t.Fatalf("want 4 data files, have %d", n)
	}
	return tbl
}

// hiveExpected is every live row of hiveTable as a reader that follows the
// spec sees it: the imported files' region and day come from the partition.
func hiveExpected() []string {
	var out []string
	add := func(id int64) {
		out = append(out, fmt.Sprintf("%d|eu|%s|%s|", id, arrow.Date32(hiveDay).FormattedString(), fmt.Sprint(float64(id)/4)))
	}
	for i := range int64(10) {
		add(i)
	}
	for f := range int64(3) {
		for i := range int64(20) {
			id := 100*(f+1) + i
			if id == 105 || id == 106 {
				continue
			}
			add(id)
		}
	}
	slices.Sort(out)
	return out
}

// TestCompactFillsAbsentPartitionColumns: files that lack their
// identity-partition columns are rewritten with the partition value in
// every row, not NULL; deleted rows stay deleted; the name-mapped file is
// read too. Checked through iceberg-go's scan and in the raw Parquet of the
// output (what every other engine reads).
func TestCompactFillsAbsentPartitionColumns(t *testing.T) {
	for _, strategy := range []Strategy{Binpack, Sort} {
		t.Run(string(strategy), func(t *testing.T) {
			e := newEnv(t)
			tbl := hiveTable(t, e, "hive_"+string(strategy))
			opts := Options{Strategy: strategy}
			if strategy == Sort {
				so, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{4}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
				if err != nil {
					t.Fatal(err)
				}
				opts.SortOrder = &so
			}
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed() != 1 {
				t.Fatalf("committed %d groups", res.Committed())
			}
			after := e.load(t, tbl.Identifier()[1])
			requireSameRows(t, hiveExpected(), rowStrings(t, after))

			// The output's own columns, without iceberg-go's projection.
			tasks := liveTasks(t, after)
			if len(tasks) != 1 {
				t.Fatalf("want 1 output file, have %d", len(tasks))
			}
			if n := len(tasks[0].DeleteFiles); n != 0 {
				t.Fatalf("output still has %d delete files", n)
			}
			raw, done := readParquet(t, after, tasks[0].File.FilePath())
			defer done()
			if raw.NumRows() != int64(len(hiveExpected())) {
				t.Fatalf("output has %d rows, want %d", raw.NumRows(), len(hiveExpected()))
			}
			for _, c := range []struct {
				name string
				want string
			}{{"region", "eu"}, {"day", arrow.Date32(hiveDay).FormattedString()}} {
				idx := raw.Schema().FieldIndices(c.name)
				if len(idx) != 1 {
					t.Fatalf("output file has no column %s", c.name)
				}
				for _, chunk := range raw.Column(idx[0]).Data().Chunks() {
					for i := range chunk.Len() {
						if chunk.IsNull(i) || chunk.ValueStr(i) != c.want {
							t.Fatalf("output column %s row %d = %q (null %v), want %q", c.name, i, chunk.ValueStr(i), chunk.IsNull(i), c.want)
						}
					}
				}
			}
		})
	}
}
