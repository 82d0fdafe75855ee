package compaction

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// A sorted chunk gathered from the run's batches must equal arrow's Take
// of the same rows from their concatenation, for every layout gather
// copies: fixed widths of 1 to 16 bytes, booleans, 32- and 64-bit-offset
// binaries, an extension type, nulls or none, sliced batches, empty
// strings and a batch of no rows.
func TestChunkedRunGatherMatchesTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeBinary},
		{Name: "u", Type: extensions.NewUUIDType(), Nullable: true},
	}, nil)
	if !chunkedGatherable(schema) {
		t.Fatal("schema not gatherable")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	batch := func(rows int, nulls bool) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for range rows {
			null := func() bool { return nulls && rng.IntN(5) == 0 }
			for c, f := range b.Fields() {
				if schema.Field(c).Nullable && null() {
					f.AppendNull()
					continue
				}
				switch f := f.(type) {
				case *array.Int8Builder:
					f.Append(int8(rng.IntN(256)))
				case *array.Int32Builder:
					f.Append(rng.Int32())
				case *array.Int64Builder:
					f.Append(rng.Int64())
				case *array.Float64Builder:
					f.Append(rng.Float64())
				case *array.TimestampBuilder:
					f.Append(arrow.Timestamp(rng.Int64()))
				case *array.Decimal128Builder:
					f.Append(decimal128.New(rng.Int64(), rng.Uint64()))
				case *array.FixedSizeBinaryBuilder:
					f.Append([]byte{byte(rng.IntN(256)), 1, 2})
				case *array.BooleanBuilder:
					f.Append(rng.IntN(2) == 0)
				case *array.StringBuilder:
					f.Append(fmt.Sprint(rng.IntN(1000) + 100)[:rng.IntN(3)])
				case *array.BinaryBuilder:
					f.Append([]byte(fmt.Sprint(rng.Int64())))
				case *extensions.UUIDBuilder:
					f.Append(uuid.New())
				default:
					t.Fatalf("no generator for %T", f)
				}
			}
		}
		return b.NewRecordBatch()
	}
	var batches []arrow.RecordBatch
	for i, rows := range []int{300, 0, 1, 500, 257} {
		rec := batch(rows, i != 3)
		if rows > 100 {
			// A slice: gather must honour the arrays' offsets.
			s := rec.NewSlice(7, int64(rows-3))
			rec.Release()
			rec = s
		}
		batches = append(batches, rec)
	}
	run := newChunkedRun(schema, batches)
	defer run.release()
	n := int(run.rows())
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })

	cols := make([]arrow.Array, schema.NumFields())
	for c := range cols {
		a, err := run.column(c, mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = a
	}
	whole := array.NewRecordBatch(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	defer whole.Release()
	for _, chunk := range [][2]int{{0, 100}, {100, 101}, {101, n}} {
		rows := perm[chunk[0]:chunk[1]]
		got, err := run.gather(rows)
		if err != nil {
			t.Fatal(err)
		}
		want, err := takeRows(context.Background(), mem, whole, rows)
		if err != nil {
			t.Fatal(err)
		}
		for c := range schema.NumFields() {
			if !array.Equal(got.Column(c), want.Column(c)) {
				t.Errorf("chunk %v column %s: gathered\n%v\nwant\n%v", chunk, schema.Field(c).Name, got.Column(c), want.Column(c))
			}
			if got.Column(c).NullN() != want.Column(c).NullN() {
				t.Errorf("chunk %v column %s: %d nulls, want %d", chunk, schema.Field(c).Name, got.Column(c).NullN(), want.Column(c).NullN())
			}
		}
		got.Release()
		want.Release()
	}
}

// Nested columns are not gathered: such a run concatenates and takes.
func TestChunkedGatherableRefusesNested(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	if chunkedGatherable(s) {
		t.Fatal("a list column was called gatherable")
	}
}
