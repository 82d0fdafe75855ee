package compaction

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icewright/icewright/providers/testkit"
)

// flatTestSchema has one field of each primitive kind iceberg-go maps to
// Arrow, optional and required, with Parquet field ids.
func flatTestSchema() *arrow.Schema {
	id := func(n int) arrow.Metadata {
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(n)})
	}
	fields := []arrow.Field{
		{Name: "req_long", Type: arrow.PrimitiveTypes.Int64, Nullable: false, Metadata: id(1)},
		{Name: "opt_int", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: id(2)},
		{Name: "opt_string", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id(3)},
		{Name: "low_card", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id(4)},
		{Name: "opt_double", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: id(5)},
		{Name: "opt_float", Type: arrow.PrimitiveTypes.Float32, Nullable: true, Metadata: id(6)},
		{Name: "opt_bool", Type: arrow.FixedWidthTypes.Boolean, Nullable: true, Metadata: id(7)},
		{Name: "opt_date", Type: arrow.FixedWidthTypes.Date32, Nullable: true, Metadata: id(8)},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true, Metadata: id(9)},
		{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: false, Metadata: id(10)},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}, Nullable: true, Metadata: id(11)},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true, Metadata: id(12)},
		{Name: "uuid", Type: extensions.NewUUIDType(), Nullable: true, Metadata: id(13)},
		{Name: "all_null", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id(14)},
		{Name: "time", Type: arrow.FixedWidthTypes.Time64us, Nullable: true, Metadata: id(15)},
		// One value per batch (constConstant), as an identity
		// partition's source column is: written as dictionary indices.
		{Name: "const_str", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id(16)},
		{Name: "const_bin", Type: arrow.BinaryTypes.Binary, Nullable: false, Metadata: id(17)},
	}
	return arrow.NewSchema(fields, nil)
}

// flatTestBatch builds n rows; nulls in every optional column but the
// first batch's opt_int (no nulls: pqarrow's all-present path).
func flatTestBatch(t *testing.T, sc *arrow.Schema, n int, seed uint64) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	null := func() bool { return r.IntN(5) == 0 }
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(seed)*1_000_000 + int64(i))
		if seed > 1 && null() {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(1000)))
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("value-%d-%d", r.IntN(1<<20), i))
		}
		b.Field(3).(*array.StringBuilder).Append([]string{"eu", "us", "ap"}[r.IntN(3)])
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(r.NormFloat64())
		}
		b.Field(5).(*array.Float32Builder).Append(float32(r.Float64()))
		if null() {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BooleanBuilder).Append(r.IntN(2) == 0)
		}
		b.Field(7).(*array.Date32Builder).Append(arrow.Date32(19000 + r.IntN(400)))
		b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Int64N(1 << 50)))
		b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Int64N(1 << 50)))
		if null() {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(1 << 40)))
		}
		if null() {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.BinaryBuilder).Append([]byte{byte(i), byte(r.IntN(256))})
		}
		if null() {
			b.Field(12).AppendNull()
		} else {
			b.Field(12).(*extensions.UUIDBuilder).Append(uuid.New())
		}
		b.Field(13).AppendNull()
		b.Field(14).(*array.Time64Builder).Append(arrow.Time64(r.Int64N(86_400_000_000)))
		b.Field(15).(*array.StringBuilder).Append(constConstant(seed, i))
		b.Field(16).(*array.BinaryBuilder).Append([]byte("us"))
	}
	return b.NewRecordBatch()
}

// flatTestConsts: the const_ columns as a partition gives them to the
// column writer (constantDict): const_bin holds "us" in every batch, so
// every row group writes it as dictionary indices; const_str holds "eu"
// in the first row group (two writes as indices), then "us" (a row group
// whose first write disagrees: written as it is) and several values.
var flatTestConsts = map[int][]byte{15: []byte("eu"), 16: []byte("us")}

// constConstant is const_str's value of row i of batch seed (see
// flatTestConsts).
func constConstant(seed uint64, i int) string {
	switch seed {
	case 3:
		return "us"
	case 4:
		return []string{"eu", "us", ""}[i%3]
	}
	return "eu"
}

// TestColumnWriterMatchesPqarrow writes the same batches, over several row
// groups, through columnWriter (columns in parallel) and through pqarrow's
// FileWriter, with the writer properties compaction uses (zstd, dictionary
// with cost fallback, statistics), and requires the same file, byte for
// byte: same pages, levels, statistics, encodings and footer.
func TestColumnWriterMatchesPqarrow(t *testing.T) {
	sc := flatTestSchema()
	props := iceberg.Properties{"write.parquet.compression-codec": "zstd"}
	for _, name := range []string{"zstd", "snappy", "uncompressed"} {
		t.Run(name, func(t *testing.T) {
			props["write.parquet.compression-codec"] = name
			wprops, err := parquetWriterProps(props, sc)
			if err != nil {
				t.Fatal(err)
			}
			aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(memory.DefaultAllocator), pqarrow.WithStoreSchema())
			batches := []arrow.RecordBatch{
				flatTestBatch(t, sc, 3000, 1),
				flatTestBatch(t, sc, 1, 2),
				flatTestBatch(t, sc, 20000, 3),
				flatTestBatch(t, sc, 777, 4),
			}
			defer func() {
				for _, b := range batches {
					b.Release()
				}
			}()
			write := func(sink parquetSink) {
				t.Helper()
				for i, b := range batches {
					if err := sink.writeBuffered(b); err != nil {
						t.Fatal(err)
					}
					if i == 1 || i == 2 { // row groups: [3001 rows] [20000] [777]
						if err := sink.newRowGroup(); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := sink.close(); err != nil {
					t.Fatal(err)
				}
			}
			var want, got bytes.Buffer
			pw, err := pqarrow.NewFileWriter(sc, &want, wprops, aprops)
			if err != nil {
				t.Fatal(err)
			}
			write(pqarrowSink{pw})
			ps, err := pqarrow.ToParquet(sc, wprops, aprops)
			if err != nil {
				t.Fatal(err)
			}
			if !flatSchema(sc, ps) {
				t.Fatal("test schema is not flat")
			}
			if want.Len() < 10000 {
				t.Fatalf("reference file is only %d bytes", want.Len())
			}
			// Queued bytes: one batch at a time, and room for several.
			for _, maxQueued := range []int64{1, 64 << 20} {
				got.Reset()
				cw, err := newColumnWriter(sc, ps, &got, wprops, aprops, 4, maxQueued, flatTestConsts)
				if err != nil {
					t.Fatal(err)
				}
				write(queueChecked{cw, t, maxQueued})
				// The byte-for-byte match above is of the indices path:
				// const_bin went through it for all 4 batches, const_str
				// for the 2 of its first row group.
				if got, want := []int{cw.cols[15].direct, cw.cols[16].direct}, []int{2, 4}; !slices.Equal(got, want) {
					t.Fatalf("writes as dictionary indices (const_str, const_bin) = %v, want %v", got, want)
				}
				if !bytes.Equal(want.Bytes(), got.Bytes()) {
					i := 0
					for i < min(want.Len(), got.Len()) && want.Bytes()[i] == got.Bytes()[i] {
						i++
					}
					t.Fatalf("max queued %d: files differ: pqarrow %d bytes, columnWriter %d bytes, first difference at byte %d", maxQueued, want.Len(), got.Len(), i)
				}
			}
		})
	}
}

// TestConstantColumnDisagrees: a batch that disagrees with the value the
// partition gave a column, after the row group began as dictionary
// indices, is written as it is (pqarrow may then change the encoding),
// and every value reads back as written.
func TestConstantColumnDisagrees(t *testing.T) {
	sc := flatTestSchema()
	wprops, aprops, ps := flatTestProps(t, sc, iceberg.Properties{"write.parquet.compression-codec": "zstd"})
	// const_str: "eu" (seed 1), "us" (seed 3), mixed (seed 4), one row
	// group; const_bin "us" throughout, but the partition says "eu".
	batches := []arrow.RecordBatch{flatTestBatch(t, sc, 3000, 1), flatTestBatch(t, sc, 500, 3), flatTestBatch(t, sc, 700, 4)}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var buf bytes.Buffer
	cw, err := newColumnWriter(sc, ps, &buf, wprops, aprops, 4, 64<<20, map[int][]byte{15: []byte("eu"), 16: []byte("eu")})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := cw.writeBuffered(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.close(); err != nil {
		t.Fatal(err)
	}
	if got, want := []int{cw.cols[15].direct, cw.cols[16].direct}, []int{1, 0}; !slices.Equal(got, want) {
		t.Fatalf("writes as dictionary indices (const_str, const_bin) = %v, want %v", got, want)
	}
	readsBack(t, buf.Bytes(), sc, batches)
}

// flatTestProps are the writer's properties for table properties props,
// and the Parquet schema of sc under them.
func flatTestProps(t *testing.T, sc *arrow.Schema, props iceberg.Properties) (*parquet.WriterProperties, pqarrow.ArrowWriterProperties, *schema.Schema) {
	t.Helper()
	wprops, err := parquetWriterProps(props, sc)
	if err != nil {
		t.Fatal(err)
	}
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(memory.DefaultAllocator), pqarrow.WithStoreSchema())
	ps, err := pqarrow.ToParquet(sc, wprops, aprops)
	if err != nil {
		t.Fatal(err)
	}
	return wprops, aprops, ps
}

// readsBack fails t unless the Parquet file holds the batches' rows.
func readsBack(t *testing.T, data []byte, sc *arrow.Schema, batches []arrow.RecordBatch) {
	t.Helper()
	tbl, done := parquetTable(t, bytes.NewReader(data))
	defer done()
	for c := range sc.NumFields() {
		var want []arrow.Array
		for _, b := range batches {
			want = append(want, b.Column(c))
		}
		if !array.ChunkedEqual(tbl.Column(c).Data(), arrow.NewChunked(sc.Field(c).Type, want)) {
			t.Fatalf("column %s reads back different values", sc.Field(c).Name)
		}
	}
}

// TestPageRowLimit: no data page holds more rows than the table's
// write.parquet.page-row-limit, in every column (plain, dictionary,
// dictionary indices of a constant, all null), whether the pages end on
// rows alone or also on size; and every value reads back.
func TestPageRowLimit(t *testing.T) {
	sc := flatTestSchema()
	for _, tc := range []struct {
		name    string
		props   iceberg.Properties
		limit   int
		rows    []int // batches; a row group ends after the first two
		exactly bool  // every chunk has ceil(rows/limit) data pages
		longs   []int // the rows of req_long's data pages, if given
	}{
		{"rows", iceberg.Properties{"write.parquet.page-row-limit": "1000"}, 1000, []int{3000, 1, 2500, 777}, true, nil},
		// 8-byte longs: 300 rows are 2,400 bytes, so after 600 rows
		// a page ends on size, and the count starts again.
		{"rows and size", iceberg.Properties{"write.parquet.page-row-limit": "1000", "write.parquet.page-size-bytes": "3000"}, 1000, []int{3000, 1, 300, 300, 300, 300, 300, 300}, false, []int{1000, 1000, 1000, 1, 600, 600, 600}},
		{"default", iceberg.Properties{}, 20000, []int{30000, 15000, 4000}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.props["write.parquet.compression-codec"] = "zstd"
			wprops, aprops, ps := flatTestProps(t, sc, tc.props)
			var batches []arrow.RecordBatch
			for i, n := range tc.rows {
				batches = append(batches, flatTestBatch(t, sc, n, uint64(i+1)))
			}
			defer func() {
				for _, b := range batches {
					b.Release()
				}
			}()
			var buf bytes.Buffer
			cw, err := newColumnWriter(sc, ps, &buf, wprops, aprops, 4, 64<<20, flatTestConsts)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range batches {
				if err := cw.writeBuffered(b); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					if err := cw.newRowGroup(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := cw.close(); err != nil {
				t.Fatal(err)
			}
			groups, err := testkit.DataPageRows(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			groupRows := []int{tc.rows[0] + tc.rows[1], 0}
			for _, n := range tc.rows[2:] {
				groupRows[1] += n
			}
			if len(groups) != len(groupRows) {
				t.Fatalf("%d row groups, want %d", len(groups), len(groupRows))
			}
			more := false // a chunk with more pages than rows alone make
			var longs []int
			for g, cols := range groups {
				for c, pages := range cols {
					rows := 0
					for _, n := range pages {
						if n > tc.limit {
							t.Fatalf("row group %d, column %s: a data page of %d rows, limit %d", g, sc.Field(c).Name, n, tc.limit)
						}
						rows += n
					}
					if c == 0 {
						longs = append(longs, pages...)
					}
					if rows != groupRows[g] {
						t.Fatalf("row group %d, column %s: pages hold %d rows, the group %d", g, sc.Field(c).Name, rows, groupRows[g])
					}
					least := (rows + tc.limit - 1) / tc.limit
					if tc.exactly && len(pages) != least {
						t.Fatalf("row group %d, column %s: %d data pages for %d rows, want %d", g, sc.Field(c).Name, len(pages), rows, least)
					}
					more = more || len(pages) > least
				}
			}
			if tc.longs != nil && !slices.Equal(longs, tc.longs) {
				t.Fatalf("req_long's data pages hold %v rows, want %v", longs, tc.longs)
			}
			if !tc.exactly && !more {
				t.Fatal("no page ended on size: the case does not test it")
			}
			readsBack(t, buf.Bytes(), sc, batches)
		})
	}
}

// TestFlatSchema: nested and dictionary fields go through pqarrow.
func TestFlatSchema(t *testing.T) {
	aprops := pqarrow.DefaultWriterProps()
	wprops, err := parquetWriterProps(iceberg.Properties{}, flatTestSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  arrow.DataType
		flat bool
	}{
		{arrow.PrimitiveTypes.Int64, true},
		{extensions.NewUUIDType(), true},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), false},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), false},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), false},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, false},
	} {
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "f", Type: tc.typ, Nullable: true},
		}, nil)
		ps, err := pqarrow.ToParquet(sc, wprops, aprops)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if got := flatSchema(sc, ps); got != tc.flat {
			t.Errorf("%s: flat = %v, want %v", tc.typ, got, tc.flat)
		}
	}
}

// TestBinpackNestedSchema compacts a table with struct, list and map
// columns (written through pqarrow's FileWriter: their levels are not
// columnWriter's) and one with only flat columns in the same run, and
// keeps every row of both.
func TestBinpackNestedSchema(t *testing.T) {
	env := newEnv(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "point", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: false},
			{ID: 4, Name: "label", Type: iceberg.PrimitiveTypes.String, Required: false},
		}}, Required: false},
		iceberg.NestedField{ID: 5, Name: "tags", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.String, ElementRequired: false}, Required: false},
		iceberg.NestedField{ID: 7, Name: "attrs", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: false}, Required: false},
	)
	tbl, err := env.cat.CreateTable(context.Background(), table.Identifier{"ns", "nested"}, sc,
		catalog.WithProperties(iceberg.Properties{"format-version": "2", "write.parquet.compression-codec": "zstd"}))
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 6 {
		r := rand.New(rand.NewPCG(uint64(c), 3))
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i := range 500 {
			b.Field(0).(*array.Int64Builder).Append(int64(c*1000 + i))
			st := b.Field(1).(*array.StructBuilder)
			if r.IntN(7) == 0 {
				st.AppendNull()
			} else {
				st.Append(true)
				if r.IntN(5) == 0 {
					st.FieldBuilder(0).AppendNull()
				} else {
					st.FieldBuilder(0).(*array.Int32Builder).Append(int32(r.IntN(100)))
				}
				st.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprint("p", r.IntN(9)))
			}
			lb := b.Field(2).(*array.ListBuilder)
			switch r.IntN(4) {
			case 0:
				lb.AppendNull()
			case 1:
				lb.AppendEmptyValue()
			default:
				lb.Append(true)
				for range 1 + r.IntN(3) {
					if r.IntN(6) == 0 {
						lb.ValueBuilder().AppendNull()
					} else {
						lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint("t", r.IntN(20)))
					}
				}
			}
			mb := b.Field(3).(*array.MapBuilder)
			if r.IntN(5) == 0 {
				mb.AppendNull()
			} else {
				mb.Append(true)
				for k := range r.IntN(3) {
					mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", k))
					mb.ItemBuilder().(*array.Int64Builder).Append(r.Int64N(1 << 40))
				}
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = appendBatch(t, tbl, rec)
		rec.Release()
	}
	flat := env.create(t, tableSpec{name: "flat"})
	flat = appendMany(t, flat, 6, 500, regions)

	for _, tb := range []*table.Table{tbl, flat} {
		before := rowStrings(t, tb)
		if len(before) != 3000 {
			t.Fatalf("setup: %d rows", len(before))
		}
		res, err := Run(context.Background(), tb, groupsAll(t, tb), Options{Strategy: Binpack, TargetFileSize: 32 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if res.Committed() != 1 || len(liveTasks(t, res.Table)) != 1 {
			t.Fatalf("%s: want 1 group into 1 file, got %d groups, %d files", tb.Identifier(), res.Committed(), len(liveTasks(t, res.Table)))
		}
		requireSameRows(t, before, rowStrings(t, res.Table))
	}
}

// A column that fails (here: an int32 array for an int64 column) fails the
// row group and the file, later batches are dropped, and close stops every
// column goroutine.
func TestColumnWriterColumnError(t *testing.T) {
	sc := flatTestSchema()
	wprops, err := parquetWriterProps(iceberg.Properties{}, sc)
	if err != nil {
		t.Fatal(err)
	}
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	ps, err := pqarrow.ToParquet(sc, wprops, aprops)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	var buf bytes.Buffer
	cw, err := newColumnWriter(sc, ps, &buf, wprops, aprops, 2, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	good := flatTestBatch(t, sc, 100, 1)
	defer good.Release()
	cols := good.Columns()
	b := array.NewInt32Builder(memory.DefaultAllocator)
	for range 100 {
		b.Append(1)
	}
	wrong := b.NewArray()
	b.Release()
	defer wrong.Release()
	mixed := slices.Clone(cols)
	mixed[0] = wrong
	bad := array.NewRecordBatch(arrow.NewSchema(append([]arrow.Field{{Name: "req_long", Type: arrow.PrimitiveTypes.Int32}}, sc.Fields()[1:]...), nil), mixed, 100)
	defer bad.Release()
	if err := cw.writeBuffered(good); err != nil {
		t.Fatal(err)
	}
	if err := cw.writeBuffered(bad); err != nil {
		t.Fatalf("queueing does not see the error yet: %v", err)
	}
	if err := cw.newRowGroup(); err == nil || !strings.Contains(err.Error(), "column 0") {
		t.Fatalf("row group after a failed column: %v", err)
	}
	if err := cw.writeBuffered(good); err == nil {
		t.Fatal("a batch after the failure was queued")
	}
	if err := cw.close(); err == nil {
		t.Fatal("close after a failed column succeeded")
	}
	_ = cw.close() // abort closes again
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left running (%d before)", n-before, before)
	}
}

// queueChecked checks, after every batch handed to a columnWriter, that
// the batches not yet written hold no more than maxQueued bytes, or one
// batch when a batch alone is larger.
type queueChecked struct {
	*columnWriter
	t         *testing.T
	maxQueued int64
}

func (q queueChecked) writeBuffered(rec arrow.RecordBatch) error {
	if err := q.columnWriter.writeBuffered(rec); err != nil {
		return err
	}
	q.qmu.Lock()
	queued := q.queued
	q.qmu.Unlock()
	if size := util.TotalRecordSize(rec); queued > max(q.maxQueued, size) {
		q.t.Fatalf("%d bytes queued with a bound of %d and a %d-byte batch", queued, q.maxQueued, size)
	}
	return nil
}

// TestIdentityConstants: the writer learns the identity partition's
// string column and value from the group's partition, and nothing from a
// partition without a value.
func TestIdentityConstants(t *testing.T) {
	env := newEnv(t)
	tbl := checkTable(t, env, "consts")
	g := euGroups(t, tbl)[0]
	spec := tbl.Metadata().PartitionSpecByID(g.SpecID)
	sc := tbl.Schema()
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	src := spec.Field(0).SourceID()
	i := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.ID == src })
	got := identityConstants(tbl, *spec, g.Tasks[0].File.Partition(), sc, as)
	if len(got) != 1 || string(got[i]) != "eu" {
		t.Fatalf("identityConstants = %v, want column %d = \"eu\"", got, i)
	}
	if got := identityConstants(tbl, *spec, map[int]any{}, sc, as); got != nil {
		t.Fatalf("identityConstants without a partition value = %v, want none", got)
	}
}
