package compaction

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// testOrder exercises every part of a sort field: a bucket (hash order, not
// value order), a time transform descending, a truncate, nulls first and
// last, and a plain column as the last tie-breaker.
func testOrder() []table.SortField {
	return []table.SortField{
		{SourceIDs: []int{4}, Transform: iceberg.BucketTransform{NumBuckets: 4}, Direction: table.SortASC, NullOrder: table.NullsFirst},
		{SourceIDs: []int{3}, Transform: iceberg.DayTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast},
		{SourceIDs: []int{6}, Transform: iceberg.TruncateTransform{Width: 6}, Direction: table.SortASC, NullOrder: table.NullsLast},
		{SourceIDs: []int{7}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsFirst},
		{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
	}
}

// refValue is one transformed sort value computed independently of the
// engine: through iceberg-go's literal-based Transform.Apply (the engine
// uses the Transformer fast path and its own byte encoding).
type refValue struct {
	null bool
	v    any
}

func refKey(t testing.TB, order []table.SortField, tb arrow.Table, names map[int]string, row int) []refValue {
	t.Helper()
	out := make([]refValue, len(order))
	for i, f := range order {
		col := tb.Column(tb.Schema().FieldIndices(names[f.SourceID()])[0]).Data().Chunk(0)
		if col.IsNull(row) {
			out[i] = refValue{null: true}
			continue
		}
		var lit iceberg.Literal
		switch a := col.(type) {
		case *array.Int32:
			lit = iceberg.NewLiteral(a.Value(row))
		case *array.Int64:
			lit = iceberg.NewLiteral(a.Value(row))
		case *array.Float64:
			lit = iceberg.NewLiteral(a.Value(row))
		case *array.String:
			lit = iceberg.NewLiteral(a.Value(row))
		case *array.Timestamp:
			lit = iceberg.NewLiteral(iceberg.Timestamp(a.Value(row)))
		default:
			t.Fatalf("reference: unsupported column type %T", col)
		}
		res := f.Transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
		if !res.Valid {
			out[i] = refValue{null: true}
			continue
		}
		out[i] = refValue{v: res.Val.Any()}
	}
	return out
}

func compareAny(a, b any) int {
	switch x := a.(type) {
	case int32:
		return cmp.Compare(x, b.(int32))
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case string:
		return cmp.Compare(x, b.(string))
	case iceberg.Date:
		return cmp.Compare(x, b.(iceberg.Date))
	}
	panic(fmt.Sprintf("compareAny %T", a))
}

func compareRef(order []table.SortField, a, b []refValue) int {
	for i, f := range order {
		x, y := a[i], b[i]
		switch {
		case x.null && y.null:
			continue
		case x.null || y.null:
			first := f.NullOrder == table.NullsFirst
			if x.null == first {
				return -1
			}
			return 1
		}
		c := compareAny(x.v, y.v)
		if f.Direction == table.SortDESC {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// orderBreaks counts adjacent rows of a file that are out of order.
func orderBreaks(t testing.TB, tbl *table.Table, path string, order []table.SortField) (breaks, rows int) {
	t.Helper()
	tb, release := readParquet(t, tbl, path)
	defer release()
	if tb.NumRows() == 0 {
		return 0, 0
	}
	// One chunk makes row addressing simple.
	names := map[int]string{}
	for _, f := range testSchema().Fields() {
		names[f.ID] = f.Name
	}
	tbc := concatTable(t, tb)
	defer tbc.Release()
	prev := refKey(t, order, tbc, names, 0)
	for r := 1; r < int(tbc.NumRows()); r++ {
		cur := refKey(t, order, tbc, names, r)
		if compareRef(order, prev, cur) > 0 {
			breaks++
		}
		prev = cur
	}
	return breaks, int(tbc.NumRows())
}

func concatTable(t testing.TB, tb arrow.Table) arrow.Table {
	t.Helper()
	cols := make([]arrow.Array, tb.NumCols())
	for i := range cols {
		chunks := tb.Column(i).Data().Chunks()
		c, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(tb.Schema(), cols, tb.NumRows())
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return array.NewTableFromRecords(tb.Schema(), []arrow.RecordBatch{rec})
}

func runSort(t *testing.T, partitioned bool, budget int64) *Result {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "sorted", partitioned: partitioned, order: testOrder()})
	tbl = appendMany(t, tbl, 10, 6000, regions)
	before := rowStrings(t, tbl)
	// The checker must be able to fail: iceberg-go's writer orders each
	// batch by the raw bucket source column, so its files have breaks.
	inputBreaks := 0
	for _, task := range liveTasks(t, tbl) {
		b, _ := orderBreaks(t, tbl, task.File.FilePath(), testOrder())
		inputBreaks += b
	}
	if inputBreaks == 0 {
		t.Fatal("reference checker found no order break in unsorted input files")
	}
	t.Logf("input files: %d order breaks in total", inputBreaks)
	tmp := t.TempDir()
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
		Strategy:       Sort,
		TargetFileSize: 256 << 10,
		MemoryBudget:   budget,
		TempDir:        tmp,
	})
	if err != nil {
		t.Fatal(err)
	}
	after := res.Table
	requireSameRows(t, before, rowStrings(t, after))
	order := testOrder()
	files := 0
	for _, task := range liveTasks(t, after) {
		files++
		id := task.File.SortOrderID()
		if id == nil || *id != after.SortOrder().OrderID() || *id == 0 {
			t.Fatalf("%s: sort_order_id %v, want %d", task.File.FilePath(), id, after.SortOrder().OrderID())
		}
		breaks, rows := orderBreaks(t, after, task.File.FilePath(), order)
		if breaks != 0 {
			t.Fatalf("%s: %d order breaks in %d rows", task.File.FilePath(), breaks, rows)
		}
		if rows < 2 {
			t.Fatalf("%s: %d rows, too few to check an order", task.File.FilePath(), rows)
		}
	}
	if files < 2 {
		t.Fatalf("want several output files, got %d", files)
	}
	requireSizesNearTarget(t, after, 256<<10)
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("spill files left behind: %d", len(left))
	}
	return res
}

func TestSortUnpartitionedInMemory(t *testing.T) {
	res := runSort(t, false, 0)
	for _, g := range res.Groups {
		if g.SpilledRuns != 0 {
			t.Fatalf("default budget should sort in memory, spilled %d runs", g.SpilledRuns)
		}
	}
}

func TestSortPartitioned(t *testing.T) {
	runSort(t, true, 0)
}

// A group much larger than the budget takes the external-merge path.
func TestSortSpillsWhenOverBudget(t *testing.T) {
	res := runSort(t, false, 3<<20) // run budget 1 MiB for ~60k rows
	spilled := 0
	for _, g := range res.Groups {
		spilled += g.SpilledRuns
	}
	if spilled < 3 {
		t.Fatalf("want the group spilled to several runs, got %d", spilled)
	}
}

func TestSortNeedsOrder(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "nosort"})
	tbl = appendMany(t, tbl, 2, 100, regions)
	_, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Sort})
	if err == nil {
		t.Fatal("sort without a sort order must be refused")
	}
}
