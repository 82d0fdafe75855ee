package compaction

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestSortByNanosecondTimestamps: a v3 table's timestamp_ns and
// timestamptz_ns columns sort by their nanoseconds, as identity and
// through day/hour and bucket transforms, and zorder ranks them; every
// value keeps its nanoseconds. The values of a microsecond differ only in
// their nanoseconds, so an order or a value that went through
// microseconds shows. (The sort key had no encoding for them: apply
// failed with "type timestamp_ns cannot be sorted by icewright".)
func TestSortByNanosecondTimestamps(t *testing.T) {
	cases := []struct {
		name  string
		order []table.SortField
		z     []string
		// check is the column whose raw nanoseconds must be in order in
		// each output file (identity sorts only); desc for DESC.
		check string
		desc  bool
	}{
		{name: "ts", order: []table.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}}, check: "ts"},
		{name: "tz_desc", order: []table.SortField{{SourceIDs: []int{3}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}}, check: "tz", desc: true},
		{name: "transforms", order: []table.SortField{
			{SourceIDs: []int{2}, Transform: iceberg.DayTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast},
			{SourceIDs: []int{3}, Transform: iceberg.HourTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
			{SourceIDs: []int{3}, Transform: iceberg.BucketTransform{NumBuckets: 4}, Direction: table.SortASC, NullOrder: table.NullsFirst},
			{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
		}},
		{name: "zorder", z: []string{"ts", "tz"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			sc := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampNs},
				iceberg.NestedField{ID: 3, Name: "tz", Type: iceberg.PrimitiveTypes.TimestampTzNs},
			)
			tbl, err := e.cat.CreateTable(ctx, table.Identifier{"ns", "nanos"}, sc,
				catalog.WithProperties(iceberg.Properties{"format-version": "3"}))
			if err != nil {
				t.Fatal(err)
			}
			as, err := table.SchemaToArrowSchema(sc, nil, true, false)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 11))
			base := time.Date(2026, 3, 29, 23, 59, 59, 999_999_000, time.UTC).UnixNano()
			for c := range 3 {
				b := array.NewRecordBuilder(memory.DefaultAllocator, as)
				for i := range 200 {
					b.Field(0).(*array.Int64Builder).Append(int64(c*200 + i))
					for f := 1; f <= 2; f++ {
						if rng.IntN(15) == 0 {
							b.Field(f).AppendNull()
							continue
						}
						// A few microseconds around midnight, every
						// nanosecond digit in use.
						b.Field(f).(*array.TimestampBuilder).Append(arrow.Timestamp(base + rng.Int64N(3000)))
					}
				}
				rec := b.NewRecordBatch()
				b.Release()
				tbl = appendBatch(t, tbl, rec)
				rec.Release()
			}
			before := rowStrings(t, tbl)
			opts := Options{Strategy: Sort, Catalog: e.cat}
			if tc.z != nil {
				opts = Options{Strategy: ZOrder, ZOrderColumns: tc.z, Catalog: e.cat}
			} else {
				opts.SortOrder = sortOrderPtr(t, tc.order)
			}
			if _, err := Run(ctx, tbl, groupsAll(t, tbl), opts); err != nil {
				t.Fatal(err)
			}
			after := e.load(t, "nanos")
			requireSameRows(t, before, rowStrings(t, after))
			if tc.check == "" {
				return
			}
			for _, task := range liveTasks(t, after) {
				raw, done := readParquet(t, after, task.File.FilePath())
				col := raw.Column(raw.Schema().FieldIndices(tc.check)[0])
				var prev *arrow.Timestamp
				seenNull := false
				for _, ch := range col.Data().Chunks() {
					ts := ch.(*array.Timestamp)
					if ts.DataType().(*arrow.TimestampType).Unit != arrow.Nanosecond {
						t.Fatalf("%s written as %s", tc.check, ts.DataType())
					}
					for i := range ts.Len() {
						if ts.IsNull(i) {
							if prev != nil && !tc.desc {
								t.Fatalf("a null after a value, nulls first")
							}
							seenNull = true
							continue
						}
						if seenNull && tc.desc {
							t.Fatalf("a value after a null, nulls last")
						}
						v := ts.Value(i)
						if prev != nil && ((!tc.desc && v < *prev) || (tc.desc && v > *prev)) {
							t.Fatalf("%s out of order: %d after %d", tc.check, v, *prev)
						}
						prev = &v
					}
				}
				done()
			}
		})
	}
}
