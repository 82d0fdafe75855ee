package compaction

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The word fast path writes the very key bytes the boxed path writes, for
// every type it serves, ascending and descending, nulls first and last; a
// null's marker is padded with zeros to the values' width.
func TestSortKeyWordPathMatchesBoxedPath(t *testing.T) {
	types := []iceberg.Type{
		iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz,
		iceberg.PrimitiveTypes.TimestampNs, iceberg.PrimitiveTypes.Float64,
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range types {
		sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: typ})
		as, err := table.SchemaToArrowSchema(sc, nil, false, false)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewBuilder(memory.DefaultAllocator, as.Field(0).Type)
		specials := []int64{0, -1, 1, math.MinInt32, math.MaxInt32, math.MinInt64, math.MaxInt64}
		for i := range 2000 {
			if rng.IntN(7) == 0 {
				b.AppendNull()
				continue
			}
			v := rng.Int64()
			if i < len(specials) {
				v = specials[i]
			}
			switch b := b.(type) {
			case *array.Int32Builder:
				b.Append(int32(v))
			case *array.Date32Builder:
				b.Append(arrow.Date32(int32(v)))
			case *array.Int64Builder:
				b.Append(v)
			case *array.Time64Builder:
				b.Append(arrow.Time64(v))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v))
			case *array.Float64Builder:
				b.Append([]float64{math.Float64frombits(uint64(v)), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), -1.5, 2.5}[i%7])
			default:
				t.Fatalf("%s: no generator for %T", typ, b)
			}
		}
		arr := b.NewArray()
		b.Release()
		for _, dir := range []table.SortDirection{table.SortASC, table.SortDESC} {
			for _, nulls := range []table.NullOrder{table.NullsFirst, table.NullsLast} {
				order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: dir, NullOrder: nulls}})
				if err != nil {
					t.Fatal(err)
				}
				fast, err := newSortKeyEncoder(order, sc, as)
				if err != nil {
					t.Fatal(err)
				}
				if fast.fields[0].word == nil {
					t.Fatalf("%s: no word path", typ)
				}
				boxed := &keyEncoder{fields: []keyField{fast.fields[0]}}
				boxed.fields[0].word, boxed.fields[0].width = nil, 0
				cols := []arrow.Array{arr}
				for i := range arr.Len() {
					got, want := fast.appendKey(nil, cols, i), boxed.appendKey(nil, cols, i)
					if arr.IsNull(i) {
						// The null marker, padded to the values' width.
						want = append(want, make([]byte, fast.fields[0].width)...)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s %s %s row %d: word path %x, boxed %x", typ, dir, nulls, i, got, want)
					}
				}
			}
		}
		arr.Release()
	}
}
