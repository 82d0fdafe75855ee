package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/testkit"
)

// corpusTable copies a table of internal/testdata/tables (written by
// another engine) into a fresh lakehouse as corpus.<dir>.
func corpusTable(t *testing.T, dir, current string, edit func(string) string) (*testkit.Lakehouse, *table.Table) {
	t.Helper()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	return l, l.AddCorpusTable(t, dir, current, "corpus."+strings.ReplaceAll(dir, "-", "_"), edit)
}

// scanStrings is every row ScanTable reads, as "col=value" cells (∅ for
// null) joined by "|", sorted.
func scanStrings(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	var out []string
	err := ScanTable(context.Background(), tbl, func(rec arrow.RecordBatch) error {
		out = append(out, batchStrings(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func batchStrings(rec arrow.RecordBatch) []string {
	var out []string
	for i := range int(rec.NumRows()) {
		var cells []string
		for c := range int(rec.NumCols()) {
			v := "∅"
			if col := rec.Column(c); !col.IsNull(i) {
				v = col.ValueStr(i)
			}
			cells = append(cells, rec.Schema().Field(c).Name+"="+v)
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

// rawStrings is every row of the current snapshot's data files read
// straight from the Parquet files (no iceberg-go projection, no deletes:
// what another engine finds in them), as scanStrings renders rows, and
// the output files' Arrow schemas.
func rawStrings(t *testing.T, tbl *table.Table) ([]string, []*arrow.Schema) {
	t.Helper()
	var out []string
	var schemas []*arrow.Schema
	for _, task := range liveTasks(t, tbl) {
		if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
			t.Fatalf("%s still has delete files", task.File.FilePath())
		}
		tb, done := readParquet(t, tbl, task.File.FilePath())
		schemas = append(schemas, tb.Schema())
		rr := array.NewTableReader(tb, 1024)
		for rr.Next() {
			out = append(out, batchStrings(rr.RecordBatch())...)
		}
		rr.Release()
		done()
	}
	slices.Sort(out)
	return out, schemas
}

const (
	defaultsDir     = "duckdb-add-columns-with-defaults"
	defaultsMeta    = "metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"
	inStructDir     = "duckdb-add-columns-with-defaults-in-struct"
	inStructMeta    = "metadata/00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json"
	longDefault     = "-9223372036854775808" // -2^63, as PyIceberg wrote it
	smallerDefault  = "-9007199254740991"    // -(2^53-1): exact through float64
	defaultsWritten = "col1=test|col_boolean=false|col_integer=453243|col_long=328725092345834|col_float=23.34342|col_double=23.343424523423433|col_decimal=3423434.23|col_date=0011-03-05|col_time=12:06:45.000000|col_timestamp=0011-03-05T12:06:45|col_timestamptz=2023-05-15T14:30:45Z|col_string=World|col_uuid=020d4fc7-acd6-45ac-b216-7873f4038e1f|col_fixed=gACAAIA=|col_binary=gACA"
)

// defaultsRow is a row of the file written before the columns were added:
// every added column reads as its initial-default (the spec's JSON forms:
// "2003-10-20", "00:00:00.012345", hex "010203ff03", ...).
func defaultsRow(col1, long string) string {
	return "col1=" + col1 + "|col_boolean=true|col_integer=342342|col_long=" + long + "|col_float=0.34234|col_double=0.342343242342342|col_decimal=12345|col_date=2003-10-20|col_time=00:00:00.012345|col_timestamp=1970-01-01T00:00:00.012345|col_timestamptz=1970-01-01T00:00:00.012345Z|col_string=HELLO|col_uuid=f79c3e09-677c-4bbd-a479-3f349cb785e7|col_fixed=AQID/wM=|col_binary=AQI="
}

// PyIceberg's defaults, which iceberg-go v0.7.0 cannot read at all
// ("unsupported write-default value type string"), read as the spec says,
// -2^63 exactly (from the metadata file's text); and since an iceberg-go
// commit would write that long back as -9223372036854776000, the table
// gets a commit refusal instead.
func TestScanTableReadsDefaultsInSpecForms(t *testing.T) {
	_, tbl := corpusTable(t, defaultsDir, defaultsMeta, nil)
	if _, err := tbl.Scan().ToArrowTable(context.Background()); err == nil {
		t.Fatal("iceberg-go's own scan reads the table now: the test no longer covers its gap")
	}
	want := []string{defaultsRow("click", longDefault), defaultsRow("purchase", longDefault), defaultsWritten}
	slices.Sort(want)
	if got := scanStrings(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("rows:\n got  %q\n want %q", got, want)
	}
	why, err := DefaultsProblem(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "col_long (field id 4) = "+longDefault) || strings.Count(why, "col_long") != 1 {
		t.Fatalf("want one refusal naming col_long's default, got %q", why)
	}
}

// A rewrite writes the defaults into the rows that lacked the columns:
// the output files hold them (read without iceberg-go), top level and
// inside a struct, where a uuid is a bare fixed[16] in the source file.
func TestCompactWritesDefaults(t *testing.T) {
	smaller := func(s string) string { return strings.ReplaceAll(s, longDefault, smallerDefault) }
	t.Run("top level", func(t *testing.T) {
		_, tbl := corpusTable(t, defaultsDir, defaultsMeta, smaller)
		if why, err := DefaultsProblem(context.Background(), tbl); err != nil || why != "" {
			t.Fatalf("a default within 2^53 is refused: %q %v", why, err)
		}
		want := []string{defaultsRow("click", smallerDefault), defaultsRow("purchase", smallerDefault), defaultsWritten}
		slices.Sort(want)
		if got := scanStrings(t, tbl); !slices.Equal(got, want) {
			t.Fatalf("before: rows\n got  %q\n want %q", got, want)
		}
		res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := scanStrings(t, res.Table); !slices.Equal(got, want) {
			t.Fatalf("after: rows\n got  %q\n want %q", got, want)
		}
		raw, _ := rawStrings(t, res.Table)
		if len(raw) != 3 {
			t.Fatalf("output files hold %d rows, want 3", len(raw))
		}
		for _, cell := range []string{"col_date=2003-10-20", "col_long=" + smallerDefault, "col_fixed=AQID/wM=", "col_timestamptz=1970-01-01T00:00:00.012345Z", "col_decimal=12345"} {
			if n := countContaining(raw, cell); n != 2 {
				t.Errorf("%d output rows hold %s, want the 2 that lacked the column: %q", n, cell, raw)
			}
		}
	})
	t.Run("in a struct", func(t *testing.T) {
		_, tbl := corpusTable(t, inStructDir, inStructMeta, smaller)
		before := scanStrings(t, tbl)
		if len(before) != 2 || countContaining(before, `"col_date":"2003-10-20"`) != 1 || countContaining(before, `"col_long":`+smallerDefault) != 1 {
			t.Fatalf("setup: the struct's added fields do not read as their defaults: %q", before)
		}
		res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{})
		if err != nil {
			t.Fatal(err)
		}
		requireSameRows(t, before, scanStrings(t, res.Table))
		raw, _ := rawStrings(t, res.Table)
		for _, cell := range []string{`"col_date":"2003-10-20"`, `"col_long":` + smallerDefault, `"col_string":"HELLO"`, `"col_uuid":"f79c3e09-677c-4bbd-a479-3f349cb785e7"`} {
			if n := countContaining(raw, cell); n != 1 {
				t.Errorf("%d output rows hold %s, want 1: %q", n, cell, raw)
			}
		}
	})
}

func countContaining(rows []string, sub string) int {
	n := 0
	for _, r := range rows {
		if strings.Contains(r, sub) {
			n++
		}
	}
	return n
}

// Identity-partition columns absent from the files, required ones too
// (iceberg-go's scanner refuses a required column a file lacks), are
// written with the partition value: the output files hold it, as required
// columns, and read the same as before. Decimal partition values keep
// their scale.
func TestCompactFillsRequiredPartitionColumns(t *testing.T) {
	for _, c := range []struct{ dir, meta, want string }{
		{"duckdb-partition-time", "metadata/00001-44546aa6-1ee5-48c5-9e3b-bc6c0bc0a60c.metadata.json", "partition_col=08:21:09.000000"},
		{"duckdb-partition-timestamp", "metadata/00001-0c9938a5-103e-4185-b46d-331368ae4db7.metadata.json", "partition_col=2023-08-22T09:15:20"},
		{"duckdb-partition-timestamptz", "metadata/00001-ffeadb58-2a9e-46ba-8b4f-f363f05de68c.metadata.json", "partition_col=2023-08-22T09:15:20Z"},
		{"duckdb-partition-fixed-length-binary", "metadata/00001-b4b3d6d2-cac2-4480-952e-0e4b3b88b5d7.metadata.json", "partition_col=aGVsbG8gd29ybGQ="},
		{"duckdb-partition-decimal-integer", "metadata/v2.metadata.json", "partition_col=1234.5432"},
		{"duckdb-partition-decimal-hugeint", "metadata/v2.metadata.json", "partition_col=123456789.45678901234567890123456"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			_, tbl := corpusTable(t, c.dir, c.meta, nil)
			before := scanStrings(t, tbl)
			if countContaining(before, c.want) == 0 {
				t.Fatalf("setup: no row reads %s: %q", c.want, before)
			}
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed() == 0 {
				t.Fatal("nothing rewritten")
			}
			requireSameRows(t, before, scanStrings(t, res.Table))
			raw, schemas := rawStrings(t, res.Table)
			requireSameRows(t, before, raw)
			col, _ := tbl.Schema().FindFieldByName("partition_col")
			for _, sc := range schemas {
				idx := sc.FieldIndices("partition_col")
				if len(idx) != 1 {
					t.Fatalf("an output file lacks partition_col: %v", sc)
				}
				if sc.Field(idx[0]).Nullable == col.Required {
					t.Fatalf("partition_col written nullable=%v, the column is required=%v", sc.Field(idx[0]).Nullable, col.Required)
				}
			}
		})
	}
}

// An equality delete on a column a file lacks (its value is the default)
// is one iceberg-go would apply to what the file holds, not to the value
// the spec projects: the plan's check and the rewrite both refuse, and the
// table is left as it was.
func TestEqualityDeleteOnAbsentColumnRefused(t *testing.T) {
	ctx := context.Background()
	_, tbl := corpusTable(t, defaultsDir, defaultsMeta, func(s string) string { return strings.ReplaceAll(s, longDefault, smallerDefault) })
	if why, err := EqualityDeleteProblem(ctx, tbl, nil); err != nil || why != "" {
		t.Fatalf("no equality delete yet, got %q %v", why, err)
	}
	tbl = testkit.DeleteEqualityOn(t, tbl, "col_string", func(b array.Builder) { b.(*array.StringBuilder).Append("World") })
	why, err := EqualityDeleteProblem(ctx, tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "matches on column col_string") {
		t.Fatalf("the plan's check does not refuse: %q", why)
	}
	snap := tbl.CurrentSnapshot().SnapshotID
	res, err := Run(ctx, tbl, groupsAll(t, tbl), Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "col_string") {
		t.Fatalf("the rewrite does not refuse: %v", err)
	}
	if res.Table.CurrentSnapshot().SnapshotID != snap {
		t.Fatal("a refused rewrite committed")
	}
}

// typedDefault per JSON form: a number beyond 2^53 is taken from the
// metadata text or refused, never guessed from the float64; values a Go
// writer typed already pass through.
func TestTypedDefault(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     any
		typ   iceberg.Type
		exact json.Number
		want  any // nil: an error
	}{
		{"int", float64(342342), iceberg.PrimitiveTypes.Int32, "", int32(342342)},
		{"int out of range", float64(1 << 40), iceberg.PrimitiveTypes.Int32, "", nil},
		{"long with a fraction", 1.5, iceberg.PrimitiveTypes.Int64, "", nil},
		{"long beyond 2^53 without text", float64(1<<53 + 2), iceberg.PrimitiveTypes.Int64, "", nil},
		{"long at 2^53 without text", float64(1 << 53), iceberg.PrimitiveTypes.Int64, "", nil},
		{"long below 2^53", float64(1<<53 - 1), iceberg.PrimitiveTypes.Int64, "", int64(1<<53 - 1)},
		{"long beyond 2^53 from text", float64(1<<53 + 2), iceberg.PrimitiveTypes.Int64, "9007199254740993", int64(9007199254740993)},
		{"long text beyond int64", -9.223372036854776e18, iceberg.PrimitiveTypes.Int64, "-9223372036854776000", nil},
		{"float", 0.34234, iceberg.PrimitiveTypes.Float32, "", float32(0.34234)},
		{"date", "2003-10-20", iceberg.PrimitiveTypes.Date, "", iceberg.Date(12345)},
		{"time", "00:00:00.012345", iceberg.PrimitiveTypes.Time, "", iceberg.Time(12345)},
		{"timestamptz", "1970-01-01T00:00:00.012345+00:00", iceberg.PrimitiveTypes.TimestampTz, "", iceberg.Timestamp(12345)},
		{"fixed hex", "010203ff03", iceberg.FixedTypeOf(5), "", []byte{1, 2, 3, 0xff, 3}},
		{"fixed of another length", "0102", iceberg.FixedTypeOf(5), "", nil},
		{"binary not hex", "zz", iceberg.PrimitiveTypes.Binary, "", nil},
		{"string", "HELLO", iceberg.PrimitiveTypes.String, "", "HELLO"},
		{"typed int", int32(42), iceberg.PrimitiveTypes.Int32, "", int32(42)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := typedDefault(c.v, c.typ, c.exact)
			if c.want == nil {
				if err == nil {
					t.Fatalf("want an error, got %v (%T)", got, got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v (%T), %v; want %v (%T)", got, got, err, c.want, c.want)
			}
		})
	}
}

// A long default float64 rounds (2^53+1 decodes as 2^53) refuses every
// commit, named in the plan's sentence; one it holds exactly but would
// write back in another form (-2^63) too; one within 2^53 does not.
func TestDefaultsProblem(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"9007199254740993", "col_long (field id 4) = 9007199254740993"},
		{longDefault, "col_long (field id 4) = " + longDefault},
		{smallerDefault, ""},
	} {
		var edit func(string) string
		if c.text != longDefault {
			edit = func(s string) string { return strings.ReplaceAll(s, longDefault, c.text) }
		}
		_, tbl := corpusTable(t, defaultsDir, defaultsMeta, edit)
		why, err := DefaultsProblem(context.Background(), tbl)
		if err != nil {
			t.Fatal(err)
		}
		if (c.want == "") != (why == "") || !strings.Contains(why, c.want) {
			t.Errorf("default %s: got %q, want one naming %q", c.text, why, c.want)
		}
	}
}
