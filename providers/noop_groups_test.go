package providers

import (
	"context"
	"maps"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/testkit"
)

// TestWithoutNoOpGroups: a group of one file is dropped unless its
// partition holds a delete file (the plan's rule for a lone file, decided
// by the plan's aggregate); iceberg-go's planner makes such groups with
// min_input_files = 1.
func TestWithoutNoOpGroups(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := l.Cat.CreateTable(ctx, l.Ident, testkit.OrdersSchema, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	// eu: two files; us: one file; ap: one file of two rows, then a delete.
	for i, region := range []string{"eu", "eu", "us", "ap"} {
		tbl = appendRows(t, tbl, []int64{int64(10 * i), int64(10*i + 1)}, []string{region, region})
	}
	tbl = testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("id"), int64(30)))

	sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 230 << 20, MinInputFiles: 1, DeleteFileThreshold: 1}
	groups, err := compaction.PlanGroups(ctx, tbl, compaction.PlanConfig{Selection: compactionConfig(sel), PerPartition: true})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := aggregatePartitions(ctx, tbl, sel, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]int{}
	for _, g := range pp.withoutNoOpGroups(groups) {
		kept[g.Partition] = len(g.Tasks)
	}
	if want := map[string]int{"region=eu": 2, "region=ap": 1}; !maps.Equal(kept, want) {
		t.Fatalf("kept groups %v, want %v (all: %d groups)", kept, want, len(groups))
	}
}

// appendRows commits one append of rows to a table of a long and a string
// column: ids[i] and strs[i] make row i.
func appendRows(t testing.TB, tbl *table.Table, ids []int64, strs []string) *table.Table {
	t.Helper()
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(strs[i])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	next, err := tbl.Append(context.Background(), rdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return next
}
