package compaction

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/icewright/icewright/internal/lakehouse"
)

// testSchema is the schema of the engine's test tables: every kind of value
// the sort key encodes (ints, strings with nulls, timestamps, doubles).
func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: false},
		iceberg.NestedField{ID: 4, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: false},
		iceberg.NestedField{ID: 5, Name: "y", Type: iceberg.PrimitiveTypes.Int32, Required: false},
		iceberg.NestedField{ID: 6, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: false},
		iceberg.NestedField{ID: 7, Name: "val", Type: iceberg.PrimitiveTypes.Float64, Required: false},
	)
}

type testEnv struct {
	cat       *sqlcat.Catalog
	db        *sql.DB
	warehouse string
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	dir := t.TempDir()
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	wh := filepath.Join(dir, "warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + wh})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(context.Background(), table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	return &testEnv{cat: cat, db: db, warehouse: wh}
}

type tableSpec struct {
	name        string
	partitioned bool // identity(region)
	order       []table.SortField
	props       iceberg.Properties
}

func (e *testEnv) create(t testing.TB, ts tableSpec) *table.Table {
	t.Helper()
	var opts []catalog.CreateTableOpt
	if ts.partitioned {
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		opts = append(opts, catalog.WithPartitionSpec(&spec))
	}
	if len(ts.order) > 0 {
		so, err := table.NewSortOrder(1, ts.order)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, catalog.WithSortOrder(so))
	}
	props := iceberg.Properties{"format-version": "2", "write.parquet.compression-codec": "zstd"}
	for k, v := range ts.props {
		props[k] = v
	}
	opts = append(opts, catalog.WithProperties(props))
	tbl, err := e.cat.CreateTable(context.Background(), table.Identifier{"ns", ts.name}, testSchema(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func (e *testEnv) load(t testing.TB, name string) *table.Table {
	t.Helper()
	tbl, err := e.cat.LoadTable(context.Background(), table.Identifier{"ns", name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

var regions = []string{"eu", "us", "ap", "sa"}

// genRows builds n deterministic rows starting at id first, with nulls in
// ts, x, name and val so null ordering is exercised.
func genRows(seed uint64, first int64, n int, regionSet []string) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
	as, err := table.SchemaToArrowSchema(testSchema(), nil, true, false)
	if err != nil {
		panic(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		b.Field(1).(*array.StringBuilder).Append(regionSet[rng.IntN(len(regionSet))])
		if rng.IntN(20) == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(base + rng.Int64N(30*24*3600*1_000_000)))
		}
		if rng.IntN(25) == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int32Builder).Append(rng.Int32N(1000) - 500)
		}
		b.Field(4).(*array.Int32Builder).Append(rng.Int32N(100000))
		if rng.IntN(10) == 0 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("user-%c%d", 'a'+rune(rng.IntN(26)), rng.IntN(5000)))
		}
		if rng.IntN(30) == 0 {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.Float64Builder).Append(rng.NormFloat64() * 100)
		}
	}
	return b.NewRecordBatch()
}

func appendBatch(t testing.TB, tbl *table.Table, rec arrow.RecordBatch) *table.Table {
	t.Helper()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
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

// appendMany makes `commits` appends of `rows` rows each.
func appendMany(t testing.TB, tbl *table.Table, commits, rows int, regionSet []string) *table.Table {
	t.Helper()
	for c := range commits {
		rec := genRows(uint64(c+1), int64(c*rows), rows, regionSet)
		tbl = appendBatch(t, tbl, rec)
		rec.Release()
	}
	return tbl
}

// rowStrings renders every live row of the table canonically, sorted: a
// multiset to compare before and after.
func rowStrings(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			var sb strings.Builder
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				if col.IsNull(i) {
					sb.WriteString("∅|")
					continue
				}
				sb.WriteString(col.ValueStr(i))
				sb.WriteByte('|')
			}
			out = append(out, sb.String())
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

func requireSameRows(t testing.TB, before, after []string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("row count changed: %d before, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("row multiset changed at %d: before %q after %q", i, before[i], after[i])
		}
	}
}

// liveFiles lists the data files of the current snapshot with their deletes.
func liveTasks(t testing.TB, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// readParquet reads one data file straight from storage, bypassing
// iceberg-go, so the order inside the file is what is checked.
func readParquet(t testing.TB, tbl *table.Table, path string) (arrow.Table, func()) {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return parquetTable(t, f)
}

// parquetTable reads the whole Parquet file r as Arrow; done releases it
// and closes r.
func parquetTable(t testing.TB, r parquet.ReaderAtSeeker) (tb arrow.Table, done func()) {
	t.Helper()
	rdr, err := file.NewParquetReader(r)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tb, err = ar.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tb, func() { tb.Release(); _ = rdr.Close() }
}

func codecOf(t testing.TB, tbl *table.Table, path string) string {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(cc.Compression().String())
}

// groupsAll makes one group per (spec, partition) from every live file.
func groupsAll(t testing.TB, tbl *table.Table) []Group {
	t.Helper()
	groups, err := PlanGroups(context.Background(), tbl, PlanConfig{
		Selection:    selectAll(),
		PerPartition: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return groups
}

// selectAll picks every file of every partition (min input files 1, every
// size a candidate).
func selectAll() icecompaction.Config {
	c := icecompaction.DefaultConfig()
	c.TargetFileSizeBytes = 1 << 40
	c.MinFileSizeBytes = 1 << 40
	c.MaxFileSizeBytes = 1 << 41
	c.MinInputFiles = 1
	return c
}

func recordReader(t testing.TB, rec arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// recordStrings renders rows as rowStrings does (same column order).
func recordStrings(t testing.TB, rec arrow.RecordBatch) []string {
	t.Helper()
	var out []string
	for i := range int(rec.NumRows()) {
		var sb strings.Builder
		for c := range int(rec.NumCols()) {
			col := rec.Column(c)
			if col.IsNull(i) {
				sb.WriteString("∅|")
				continue
			}
			sb.WriteString(col.ValueStr(i))
			sb.WriteByte('|')
		}
		out = append(out, sb.String())
	}
	return out
}
