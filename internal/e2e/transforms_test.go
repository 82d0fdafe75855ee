package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// The tables of this file are written by iceberg-go, NOT by another engine.
// Issue 14 asks for every partition transform and type on tables other
// engines wrote, and the corpus (internal/testdata/tables) has identity,
// bucket, year, month, day and hour; but no public repository that could be
// fetched holds a complete table another engine wrote with a truncate or a
// void partition field, or with v3 timestamp_ns/timestamptz_ns columns (the
// corpus README says where the search looked), and no other writer (Spark,
// PyIceberg, DuckDB's iceberg extension) can run here. So iceberg-go writes
// them, and what makes them worth testing is held to the same bar as the
// corpus: plan -> apply -> plan under binpack and sort, values read by
// DuckDB (scripts/duckdb-fingerprint.cjs) and by icewright's reader
// (compaction.ScanTable) unchanged, and a second plan with nothing to do.
// On top of the corpus test, each rewritten file's partition tuple is
// checked against its rows: the tuple of every output file is one of the
// inputs' and equals the transform of every row it holds.
//
// The tables live at plain paths (no file:// scheme): iceberg-go's local IO
// percent-decodes a file:// URI, where Java's Hadoop IO and DuckDB read the
// path literally, so the escaped partition directories iceberg-go's own
// appends make (s_trunc=%C5%BC...) would be unreadable by DuckDB before
// icewright touches them. TestFileURIPartitionPathsMeanOneFile covers what
// icewright itself writes at a file:// location.

// goWrittenTable is one iceberg-go-written test table.
type goWrittenTable struct {
	name   string
	format int
	schema *iceberg.Schema
	spec   iceberg.PartitionSpec
	// batches are appended one after the other: each append writes one
	// file per partition its rows fall in.
	batches [][][]any
	// evolve, when set, runs after the first evolveAfter batches (a
	// partition field dropped, say) and the rest are appended after it.
	evolve      func(ctx context.Context, t testing.TB, tbl *table.Table) *table.Table
	evolveAfter int
	// sorts are the sort runs' sort_order terms: the first on a partition
	// source column, the second on another column.
	sorts [2]string
	// setup, when set, checks what iceberg-go wrote is the case meant.
	setup func(t testing.TB, tbl *table.Table)
	// from, when set, is a corpus table (a directory of
	// internal/testdata/tables and its current metadata) the table starts
	// as, instead of an empty one of schema and spec: copied, registered,
	// then evolved and appended to as above.
	from, fromMetadata string
	fromRows           int64 // the corpus table's rows
}

// row is one table row, values in schema order (nil for null): int32,
// int64, string, []byte, decimal128.Num (unscaled), time.Time (timestamps).
type row = []any

// transformTables are the tables: truncate on every type it takes, void
// (a v1 field dropped and an explicit v2 one), and v3 nanosecond timestamps
// as plain columns and as identity, day and hour sources.
func transformTables() []goWrittenTable {
	idField := iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}
	field := func(id int, name string, typ iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: typ}
	}
	part := func(src, id int, name string, tr iceberg.Transform) iceberg.PartitionField {
		return iceberg.PartitionField{SourceIDs: []int{src}, FieldID: id, Name: name, Transform: tr}
	}
	// Multi-byte UTF-8: truncate[2] keeps two code points ("żó", "日本"),
	// not two bytes; "" and a value shorter than the width are their own
	// partitions.
	words := []any{"żółw", "żółty", "żó", "日本語", "日本", "abc", "ab", "a", "", nil, "🙂x", "🙂y"}
	var tables []goWrittenTable

	{ // truncate[2] on a string
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i, w := range words {
				id := int64(b*100 + i)
				rows = append(rows, row{id, w, int32(i*7 - b)})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "truncate_string", format: 2,
			schema:  iceberg.NewSchema(0, idField, field(2, "s", iceberg.PrimitiveTypes.String), field(3, "n", iceberg.PrimitiveTypes.Int32)),
			spec:    iceberg.NewPartitionSpec(part(2, 1000, "s_trunc", iceberg.TruncateTransform{Width: 2})),
			batches: batches,
			sorts:   [2]string{"s DESC NULLS LAST", "n"},
		})
	}
	{ // truncate[10] on an int, truncate[1000] on a long: negatives round down
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i := range 24 {
				id := int64(b*100 + i)
				var n, l any = int32(i*7 - 80 + b), int64(i)*937 - 11000 - int64(b)
				if i == 5 {
					n, l = nil, nil
				}
				rows = append(rows, row{id, n, l})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "truncate_int_long", format: 2,
			schema: iceberg.NewSchema(0, idField, field(2, "n", iceberg.PrimitiveTypes.Int32), field(3, "l", iceberg.PrimitiveTypes.Int64)),
			spec: iceberg.NewPartitionSpec(
				part(2, 1000, "n_trunc", iceberg.TruncateTransform{Width: 10}),
				part(3, 1001, "l_trunc", iceberg.TruncateTransform{Width: 1000})),
			batches: batches,
			sorts:   [2]string{"l", "id DESC"},
		})
	}
	{ // truncate on decimals, one fitting a long and one of 38 digits
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i := range 20 {
				id := int64(b*100 + i)
				var d, w any = decimal128.FromI64(int64(i*3777 - 40000 + b)), decimal128.FromU64(uint64(i) * 987654321).Mul(decimal128.FromU64(1e18)).Sub(decimal128.FromI64(int64(b)))
				if i%2 == 1 {
					w = w.(decimal128.Num).Negate()
				}
				if i == 3 {
					d, w = nil, nil
				}
				rows = append(rows, row{id, d, w})
			}
			batches = append(batches, rows)
		}
		// One decimal field per spec: iceberg-go v0.7.0 cannot write the
		// manifest of a spec with two (TestTwoDecimalPartitionFieldsRefused).
		sc := iceberg.NewSchema(0, idField, field(2, "d", iceberg.DecimalTypeOf(10, 2)), field(3, "w", iceberg.DecimalTypeOf(38, 4)))
		tables = append(tables, goWrittenTable{
			name: "truncate_decimal", format: 2, schema: sc,
			spec:    iceberg.NewPartitionSpec(part(2, 1000, "d_trunc", iceberg.TruncateTransform{Width: 5000})),
			batches: batches,
			sorts:   [2]string{"d", "w DESC"},
		}, goWrittenTable{
			name: "truncate_decimal38", format: 2, schema: sc,
			spec:    iceberg.NewPartitionSpec(part(3, 1000, "w_trunc", iceberg.TruncateTransform{Width: 1_000_000_000})),
			batches: batches,
			sorts:   [2]string{"w DESC", "d"},
		})
	}
	{ // truncate[2] on binary: bytes, not code points; 0x00 and 0xff, and
		// values whose base64 partition path holds '/', '+' and '='
		vals := []any{[]byte{0, 0, 1}, []byte{0, 0}, []byte{0}, []byte{0xff, 0xfe, 0x00}, []byte{0xfb, 0xff, 9}, []byte{0xfb, 0xef}, []byte("żółw"), []byte{}, nil}
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i, v := range vals {
				rows = append(rows, row{int64(b*100 + i), v, fmt.Sprintf("v%d", (i*5+b)%7)})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "truncate_binary", format: 2,
			schema:  iceberg.NewSchema(0, idField, field(2, "b", iceberg.PrimitiveTypes.Binary), field(3, "s", iceberg.PrimitiveTypes.String)),
			spec:    iceberg.NewPartitionSpec(part(2, 1000, "b_trunc", iceberg.TruncateTransform{Width: 2})),
			batches: batches,
			sorts:   [2]string{"b", "s"},
		})
	}
	{ // every truncate in one spec of a format v1 table: multi-field tuples
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i := range 16 {
				rows = append(rows, row{int64(b*100 + i), words[i%len(words)], int32(i%3*10 + b), int64(i % 2 * 1000), decimal128.FromI64(int64(i%4) * 150), []byte{byte(i % 2), byte(b)}})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "truncate_all_v1", format: 1,
			schema: iceberg.NewSchema(0, idField, field(2, "s", iceberg.PrimitiveTypes.String), field(3, "n", iceberg.PrimitiveTypes.Int32),
				field(4, "l", iceberg.PrimitiveTypes.Int64), field(5, "d", iceberg.DecimalTypeOf(9, 2)), field(6, "b", iceberg.PrimitiveTypes.Binary)),
			spec: iceberg.NewPartitionSpec(
				part(2, 1000, "s_trunc", iceberg.TruncateTransform{Width: 1}),
				part(3, 1001, "n_trunc", iceberg.TruncateTransform{Width: 20}),
				part(4, 1002, "l_trunc", iceberg.TruncateTransform{Width: 100}),
				part(5, 1003, "d_trunc", iceberg.TruncateTransform{Width: 200}),
				part(6, 1004, "b_trunc", iceberg.TruncateTransform{Width: 1})),
			batches: batches,
			sorts:   [2]string{"s", "id"},
		})
	}
	{ // v1: identity(cat), then the field dropped, which a v1 spec keeps
		// as void (iceberg-go's UpdateSpec.RemoveField on v1). Before the
		// drop: cat 'a' in two files, 'b' and 'c' one lone file each (no
		// action, whatever the strategy); after it, three files in the one
		// partition {cat: null} of the new spec.
		batches := [][]row{
			{{int64(1), "a", "x1"}, {int64(2), "b", "x2"}, {int64(3), "c", "x3"}, {int64(4), "a", nil}},
			{{int64(5), "a", "x5"}, {int64(6), "a", "x6"}},
		}
		for b := range 3 {
			var rows []row
			for i := range 6 {
				rows = append(rows, row{int64(100*(b+1) + i), []any{"a", "b", "d", nil}[i%4], fmt.Sprintf("y%d", i)})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "void_v1_dropped", format: 1,
			schema:  iceberg.NewSchema(0, idField, field(2, "cat", iceberg.PrimitiveTypes.String), field(3, "note", iceberg.PrimitiveTypes.String)),
			spec:    iceberg.NewPartitionSpec(part(2, 1000, "cat", iceberg.IdentityTransform{})),
			batches: batches, evolveAfter: 2,
			evolve: dropPartitionField("cat"),
			sorts:  [2]string{"cat", "id DESC"},
			setup: func(t testing.TB, tbl *table.Table) {
				t.Helper()
				specs, cur := tbl.Metadata().PartitionSpecs(), tbl.Spec()
				if len(specs) != 2 || cur.ID() != 1 || cur.NumFields() != 1 {
					t.Fatalf("void_v1_dropped: want specs 0 and 1 (current), got %v", specs)
				}
				if f := cur.Field(0); f.FieldID != 1000 || !f.Transform.Equals(iceberg.VoidTransform{}) {
					t.Fatalf("void_v1_dropped: the dropped field is %v in spec 1, want void with its field id 1000", f)
				}
			},
		})
	}
	{ // v2: an explicit void field beside identity(k)
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i := range 12 {
				rows = append(rows, row{int64(b*100 + i), []any{"p", "q", nil}[i%3], int32(i % 2)})
			}
			batches = append(batches, rows)
		}
		tables = append(tables, goWrittenTable{
			name: "void_v2_explicit", format: 2,
			schema: iceberg.NewSchema(0, idField, field(2, "cat", iceberg.PrimitiveTypes.String), field(3, "k", iceberg.PrimitiveTypes.Int32)),
			spec: iceberg.NewPartitionSpec(
				part(2, 1000, "cat_void", iceberg.VoidTransform{}),
				part(3, 1001, "k", iceberg.IdentityTransform{})),
			batches: batches,
			sorts:   [2]string{"cat", "id"},
		})
	}
	// v3 nanosecond timestamps: sub-microsecond digits on every value, so
	// any trip through microseconds shows.
	base := time.Date(2026, 3, 29, 0, 59, 58, 123456789, time.UTC)
	nsBatches := func(step time.Duration) [][]row {
		var batches [][]row
		for b := range 3 {
			var rows []row
			for i := range 16 {
				id := int64(b*100 + i)
				var ts, tz any = base.Add(time.Duration(i%6) * step).Add(time.Duration(b*7+i) * time.Nanosecond), base.Add(time.Duration(i)*37*time.Minute + time.Duration(b*3+i))
				if i == 4 {
					ts, tz = nil, nil
				}
				rows = append(rows, row{id, ts, tz})
			}
			batches = append(batches, rows)
		}
		return batches
	}
	nsSchema := iceberg.NewSchema(0, idField, field(2, "ts", iceberg.PrimitiveTypes.TimestampNs), field(3, "tz", iceberg.PrimitiveTypes.TimestampTzNs))
	tables = append(tables,
		goWrittenTable{
			name: "timestamp_ns_identity", format: 3, schema: nsSchema,
			spec: iceberg.NewPartitionSpec(part(2, 1000, "ts", iceberg.IdentityTransform{})),
			batches: func() [][]row {
				// identity: few distinct values, each in every batch
				bs := nsBatches(0)
				for _, rows := range bs {
					for i, r := range rows {
						if r[1] != nil {
							r[1] = base.Add(time.Duration(i%3) * time.Nanosecond)
						}
					}
				}
				return bs
			}(),
			sorts: [2]string{"ts", "tz DESC"},
		},
		goWrittenTable{
			name: "timestamp_ns_day", format: 3, schema: nsSchema,
			spec:    iceberg.NewPartitionSpec(part(2, 1000, "ts_day", iceberg.DayTransform{})),
			batches: nsBatches(11 * time.Hour),
			sorts:   [2]string{"ts", "tz"},
		},
		goWrittenTable{
			name: "timestamptz_ns_hour", format: 3, schema: nsSchema,
			spec:    iceberg.NewPartitionSpec(part(3, 1000, "tz_hour", iceberg.HourTransform{})),
			batches: nsBatches(time.Minute),
			sorts:   [2]string{"tz DESC NULLS LAST", "ts"},
		},
	)
	return tables
}

// build creates the table at loc (a plain path), or copies the corpus
// table there, and appends its batches.
func (g goWrittenTable) build(ctx context.Context, t testing.TB, be *backend, ident table.Identifier, loc string) *table.Table {
	t.Helper()
	var tbl *table.Table
	var err error
	if g.from != "" {
		md := testkit.CopyTable(t, filepath.Join(corpusDir(t), g.from), loc, g.fromMetadata)
		be.register(ctx, t, ident, "file://"+md)
		tbl, err = be.cat.LoadTable(ctx, ident)
	} else {
		tbl, err = be.cat.CreateTable(ctx, ident, g.schema,
			catalog.WithLocation(loc),
			catalog.WithPartitionSpec(&g.spec),
			catalog.WithProperties(iceberg.Properties{"format-version": fmt.Sprint(g.format)}))
	}
	if err != nil {
		t.Fatalf("%s: create: %v", g.name, err)
	}
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, rows := range g.batches {
		if g.evolve != nil && i == g.evolveAfter {
			tbl = g.evolve(ctx, t, tbl)
		}
		rec := buildBatch(t, as, rows)
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		rec.Release()
		if err != nil {
			t.Fatalf("%s: append batch %d: %v", g.name, i, err)
		}
	}
	return tbl
}

// evolveSpec commits one partition spec change made with iceberg-go's
// UpdateSpec.
func evolveSpec(ctx context.Context, t testing.TB, tbl *table.Table, change func(*table.UpdateSpec) *table.UpdateSpec) *table.Table {
	t.Helper()
	txn := tbl.NewTransaction()
	if err := change(txn.UpdateSpec(true)).Commit(); err != nil {
		t.Fatalf("%v: evolve the partition spec: %v", tbl.Identifier(), err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatalf("%v: evolve the partition spec: %v", tbl.Identifier(), err)
	}
	return next
}

// dropPartitionField is an evolve step removing a partition field (on
// format v1 the spec keeps it as void).
func dropPartitionField(name string) func(context.Context, testing.TB, *table.Table) *table.Table {
	return func(ctx context.Context, t testing.TB, tbl *table.Table) *table.Table {
		return evolveSpec(ctx, t, tbl, func(u *table.UpdateSpec) *table.UpdateSpec { return u.RemoveField(name) })
	}
}

// rowCount is the rows the batches hold.
func (g goWrittenTable) rowCount() int64 {
	n := g.fromRows
	for _, b := range g.batches {
		n += int64(len(b))
	}
	return n
}

// buildBatch makes one Arrow batch of rows (see row).
func buildBatch(t testing.TB, as *arrow.Schema, rows []row) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, r := range rows {
		for c, v := range r {
			fb := b.Field(c)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch x := fb.(type) {
			case *array.Int32Builder:
				x.Append(v.(int32))
			case *array.Int64Builder:
				x.Append(v.(int64))
			case *array.StringBuilder:
				x.Append(v.(string))
			case *array.BinaryBuilder:
				x.Append(v.([]byte))
			case *array.Decimal128Builder:
				x.Append(v.(decimal128.Num))
			case *array.TimestampBuilder:
				unit := as.Field(c).Type.(*arrow.TimestampType).Unit
				ts, err := arrow.TimestampFromTime(v.(time.Time), unit)
				if err != nil {
					t.Fatal(err)
				}
				x.Append(ts)
			default:
				t.Fatalf("buildBatch: no case for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestGoWrittenTransformsPlanApplyPlan runs plan -> apply -> plan on the
// iceberg-go-written tables of transformTables (not foreign tables: see
// the comment at the top of this file) under binpack and under sort by each
// table's two sort terms, and requires what TestCorpusPlanApplyPlan does
// (values unchanged as DuckDB and icewright's reader read them, every
// referenced file present, a second plan with no action) and: the first plan
// compacts each table with no refusal; after apply every (spec, partition)
// holds one file, the set of partition tuples is the one before, each
// file's tuple is the transform of each of its rows (a void field's is
// null), and under sort each file's rows are in the order's sequence.
//
// binpack_file_uri has icewright write its files through a file:// URI
// (write.data.path): iceberg-go's local IO percent-decodes such a URI, while
// DuckDB and Java's Hadoop IO read the path literally, so a file written
// under an escaped partition directory (s_trunc=%C5%BC) sat where no other
// reader looks for it.
func TestGoWrittenTransformsPlanApplyPlan(t *testing.T) {
	runTransformTables(t, "gowritten", transformTables())
}

// runTransformTables is TestGoWrittenTransformsPlanApplyPlan on tables, each
// run on fresh copies in namespace ns.
func runTransformTables(t *testing.T, ns string, tables []goWrittenTable) {
	duck := testenv.DuckDBReader(t)
	runs := []struct {
		name string
		sort int // index into sorts, -1 for binpack
		// fileURI sets write.data.path to the data directory as a
		// file:// URI, so icewright writes its files through one (see
		// TestGoWrittenTransformsPlanApplyPlan's comment).
		fileURI bool
	}{{"binpack", -1, false}, {"sort_partition_column", 0, false}, {"sort_other_column", 1, false}, {"binpack_file_uri", -1, true}}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			be := sqliteFile(ctx, t)
			createNamespace(ctx, t, be.cat, ns)
			now := time.Now()
			type state struct {
				g          goWrittenTable
				ident      table.Identifier
				addr       string
				goFP, duck fingerprint
				parts      map[string]bool   // partitionKey of the live files
				lone       map[string]string // partitionKey -> path of a partition's only file
			}
			var states []*state
			var blocks strings.Builder
			for _, g := range tables {
				ident := table.Identifier{ns, g.name}
				loc := strings.TrimPrefix(be.location(ns, g.name), "file://")
				tbl := g.build(ctx, t, be, ident, loc)
				if run.fileURI {
					txn := tbl.NewTransaction()
					if err := txn.SetProperties(iceberg.Properties{"write.data.path": "file://" + loc + "/data"}); err != nil {
						t.Fatal(err)
					}
					var err error
					if tbl, err = txn.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				}
				st := &state{g: g, ident: ident, addr: catalogName + "." + ns + "." + g.name}
				var err error
				if st.goFP, err = goFingerprint(ctx, tbl); err != nil {
					t.Fatalf("%s: %v", g.name, err)
				}
				if st.duck, err = duckFingerprint(ctx, duck, tbl); err != nil {
					t.Fatalf("%s: %v", g.name, err)
				}
				if st.goFP.Rows != g.rowCount() || st.duck.Rows != g.rowCount() {
					t.Fatalf("%s: iceberg-go reads %d rows, DuckDB %d, %d were written", g.name, st.goFP.Rows, st.duck.Rows, g.rowCount())
				}
				if g.setup != nil {
					g.setup(t, tbl)
				}
				st.parts, st.lone = partitionsOf(ctx, t, tbl)
				if len(st.lone) == len(st.parts) {
					t.Fatalf("%s: every partition has one file: nothing to compact", g.name)
				}
				if run.sort >= 0 {
					fmt.Fprintf(&blocks, "table %q {\n  policy = policy.corpus\n  sort_order = [%q]\n}\n", st.addr, g.sorts[run.sort])
				}
				states = append(states, st)
			}
			pol := corpusPolicies[0].hcl
			if run.sort >= 0 {
				pol = corpusPolicies[1].hcl
			}
			cfg := writeCorpusConfig(t, be, ns, pol, blocks.String())
			nowFn := func() time.Time { return now }
			p, res := planApply(ctx, t, cfg, nowFn, nil)
			for _, e := range p.Errors {
				t.Errorf("first plan: %s: %s", e.Address, e.Message)
			}
			requireApplied(t, res)
			for _, st := range states {
				tp := findTable(t, p, st.addr)
				if len(tp.Refusals) > 0 {
					t.Errorf("%s: the plan refused %+v", st.g.name, tp.Refusals)
				}
				if actionOf(tp, diff.Compact) == nil {
					t.Errorf("%s: the first plan has no compaction: %v", st.g.name, actionTypes(tp))
				}
				tbl, err := be.cat.LoadTable(ctx, st.ident)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := goFingerprint(ctx, tbl); err != nil {
					t.Errorf("%s: after apply: %v", st.g.name, err)
				} else if !got.equal(st.goFP) {
					t.Errorf("%s: icewright's reader reads other values after apply:\n before %v\n after  %v", st.g.name, st.goFP, got)
				}
				if got, err := duckFingerprint(ctx, duck, tbl); err != nil {
					t.Errorf("%s: after apply: %v", st.g.name, err)
				} else if !got.equal(st.duck) {
					t.Errorf("%s: DuckDB reads other values after apply:\n before %v\n after  %v", st.g.name, st.duck, got)
				}
				requireReferencedPresent(ctx, t, st.g.name, tbl)
				after, afterLone := partitionsOf(ctx, t, tbl)
				if !maps.Equal(after, st.parts) {
					t.Errorf("%s: partition tuples changed:\n before %v\n after  %v", st.g.name, slices.Sorted(maps.Keys(st.parts)), slices.Sorted(maps.Keys(after)))
				}
				// A partition's lone file (of an older spec too) is no
				// action: the very file is still there.
				for key, path := range st.lone {
					if afterLone[key] != path {
						t.Errorf("%s: the lone file %s of %s was rewritten (now %q)", st.g.name, path, key, afterLone[key])
					}
				}
				var order string
				if run.sort >= 0 {
					order = st.g.sorts[run.sort]
				}
				requireFilesPartitioned(ctx, t, st.g.name, tbl, order)
			}
			second := planOnly(ctx, t, cfg, nowFn)
			for _, e := range second.Errors {
				t.Errorf("second plan: %s: %s", e.Address, e.Message)
			}
			for _, tp := range second.Tables {
				if len(tp.Actions) > 0 || len(tp.Refusals) > 0 {
					t.Errorf("%s: not converged, the second plan has %v, refusals %+v", tp.Address, actionTypes(&tp), tp.Refusals)
				}
			}
		})
	}
}

// partitionKey renders a file's spec and partition tuple, in the spec's
// field order.
func partitionKey(tbl *table.Table, df iceberg.DataFile) string {
	spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID()))
	var sb strings.Builder
	fmt.Fprintf(&sb, "spec %d:", df.SpecID())
	for _, f := range spec.Fields() {
		v, ok := df.Partition()[f.FieldID]
		if !ok {
			fmt.Fprintf(&sb, " %s absent", f.Name)
			continue
		}
		fmt.Fprintf(&sb, " %s=%s", f.Name, partitionValue(v))
	}
	return sb.String()
}

func partitionValue(v any) string {
	if lit, ok := v.(iceberg.Literal); ok {
		// iceberg-go reads a decimal partition value as a literal
		v = lit.Any()
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case []byte:
		return fmt.Sprintf("0x%x", x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// partitionsOf is the set of partitionKey of the live data files, and the
// path of the only file of each partition that has one.
func partitionsOf(ctx context.Context, t testing.TB, tbl *table.Table) (map[string]bool, map[string]string) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{}
	for _, task := range tasks {
		k := partitionKey(tbl, task.File)
		files[k] = append(files[k], task.File.FilePath())
	}
	parts, lone := map[string]bool{}, map[string]string{}
	for k, paths := range files {
		parts[k] = true
		if len(paths) == 1 {
			lone[k] = paths[0]
		}
	}
	return parts, lone
}

// requireFilesPartitioned reads every live data file on its own and checks
// that the (spec, partition) has no other file, that every row's source
// values transform to the file's tuple (iceberg-go's transforms, which
// follow the spec: truncate counts code points of a string and bytes of a
// binary, rounds numbers toward negative infinity; void is null), and,
// when order is a sort term ("col [DESC] [NULLS FIRST|LAST]"), that the
// file's rows are in that order.
func requireFilesPartitioned(ctx context.Context, t testing.TB, name string, tbl *table.Table, order string) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := tbl.Schema()
	files := map[string]string{}
	for _, task := range tasks {
		df := task.File
		key := partitionKey(tbl, df)
		if other, ok := files[key]; ok {
			t.Errorf("%s: %s and %s are both in %s after apply", name, other, df.FilePath(), key)
		}
		files[key] = df.FilePath()
		spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID()))
		_, it, err := tbl.Scan().ReadTasks(ctx, []table.FileScanTask{task})
		if err != nil {
			t.Fatal(err)
		}
		var prev any
		first := true
		for rec, err := range it {
			if err != nil {
				t.Fatalf("%s: read %s: %v", name, df.FilePath(), err)
			}
			for _, pf := range spec.Fields() {
				src, _ := sc.FindFieldByID(pf.SourceID())
				col := rec.Column(rec.Schema().FieldIndices(src.Name)[0])
				want := partitionValue(df.Partition()[pf.FieldID])
				for i := range col.Len() {
					v := icebergValue(t, col, i, src.Type)
					out := pf.Transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: v != nil, Val: literalOf(v)})
					got := "null"
					if out.Valid {
						got = partitionValue(out.Val.Any())
					}
					if got != want {
						t.Errorf("%s: %s row %d: %s(%s) of %v is %s, the file's tuple says %s", name, df.FilePath(), i, pf.Transform, src.Name, v, got, want)
						break
					}
				}
			}
			if order != "" {
				colName, desc, nullsFirst := parseSortTerm(order)
				src, _ := sc.FindFieldByName(colName)
				col := rec.Column(rec.Schema().FieldIndices(colName)[0])
				for i := range col.Len() {
					v := icebergValue(t, col, i, src.Type)
					if !first && !inOrder(prev, v, desc, nullsFirst) {
						t.Errorf("%s: %s is not sorted by %q: %v before %v", name, df.FilePath(), order, prev, v)
						break
					}
					prev, first = v, false
				}
			}
			rec.Release()
		}
	}
}

// parseSortTerm reads the sort terms of transformTables: a column, DESC,
// NULLS FIRST/LAST, with Iceberg's defaults (nulls first ascending, last
// descending).
func parseSortTerm(term string) (col string, desc, nullsFirst bool) {
	f := strings.Fields(term)
	col = f[0]
	desc = slices.Contains(f, "DESC")
	nullsFirst = !desc
	if i := slices.Index(f, "NULLS"); i >= 0 {
		nullsFirst = f[i+1] == "FIRST"
	}
	return col, desc, nullsFirst
}

// inOrder reports whether a may come before b.
func inOrder(a, b any, desc, nullsFirst bool) bool {
	switch {
	case a == nil && b == nil:
		return true
	case a == nil:
		return nullsFirst
	case b == nil:
		return !nullsFirst
	}
	c := compareValues(a, b)
	if desc {
		return c >= 0
	}
	return c <= 0
}

func compareValues(a, b any) int {
	switch x := a.(type) {
	case int32:
		return cmpOrdered(x, b.(int32))
	case int64:
		return cmpOrdered(x, b.(int64))
	case string:
		// Go compares strings bytewise: UTF-8 order, which is code point
		// order, Iceberg's order for strings.
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case iceberg.Decimal:
		return x.Val.Cmp(b.(iceberg.Decimal).Val)
	case iceberg.TimestampNano:
		return cmpOrdered(x, b.(iceberg.TimestampNano))
	case iceberg.Timestamp:
		return cmpOrdered(x, b.(iceberg.Timestamp))
	}
	panic(fmt.Sprintf("compareValues: %T", a))
}

func cmpOrdered[T int32 | int64 | iceberg.TimestampNano | iceberg.Timestamp](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// icebergValue is row i of col as the Go value iceberg-go's transforms
// take for typ (nil for null).
func icebergValue(t testing.TB, col arrow.Array, i int, typ iceberg.Type) any {
	t.Helper()
	if col.IsNull(i) {
		return nil
	}
	switch c := col.(type) {
	case *array.Int32:
		return c.Value(i)
	case *array.Int64:
		return c.Value(i)
	case *array.String:
		return c.Value(i)
	case *array.LargeString:
		return c.Value(i)
	case *array.Binary:
		return slices.Clone(c.Value(i))
	case *array.LargeBinary:
		return slices.Clone(c.Value(i))
	case *array.Decimal128:
		return iceberg.Decimal{Val: c.Value(i), Scale: typ.(iceberg.DecimalType).Scale()}
	case *array.Timestamp:
		switch c.DataType().(*arrow.TimestampType).Unit {
		case arrow.Nanosecond:
			return iceberg.TimestampNano(c.Value(i))
		case arrow.Microsecond:
			return iceberg.Timestamp(c.Value(i))
		}
		t.Fatalf("timestamp column of %s read in %s", typ, c.DataType())
	}
	t.Fatalf("icebergValue: no case for %T (%s)", col, typ)
	return nil
}

func literalOf(v any) iceberg.Literal {
	switch x := v.(type) {
	case nil:
		return nil
	case int32:
		return iceberg.NewLiteral(x)
	case int64:
		return iceberg.NewLiteral(x)
	case string:
		return iceberg.NewLiteral(x)
	case []byte:
		return iceberg.NewLiteral(x)
	case iceberg.Decimal:
		return iceberg.NewLiteral(x)
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(x)
	case iceberg.Timestamp:
		return iceberg.NewLiteral(x)
	}
	panic(fmt.Sprintf("literalOf: %T", v))
}

// TestSparkV1FieldDroppedToVoidPlanApplyPlan runs the checks of
// TestGoWrittenTransformsPlanApplyPlan on a foreign table turned into a
// void case: impala-spark-hour-identity-v1 of the corpus (Spark, format v1,
// hour(event_time) and identity(action), 20 files of one row in 3
// partitions), whose identity field iceberg-go then drops: a v1 spec keeps
// it as void (spec 1: hour, void(action), same field ids). What was edited:
// only that spec evolution (a metadata commit by iceberg-go's
// UpdateSpec.RemoveField) and two iceberg-go appends under spec 1; Spark's
// files stay in spec 0 with their tuples. Compaction must merge Spark's
// files within spec 0 (its tuple kept, the rewrite never moves files to
// the current spec) and iceberg-go's within spec 1 (action null in every
// output's tuple), with the values DuckDB reads unchanged.
func TestSparkV1FieldDroppedToVoidPlanApplyPlan(t *testing.T) {
	hour := time.Date(2020, 1, 1, 8, 0, 0, 0, time.UTC)
	var batches [][]row
	for b := range 2 {
		var rows []row
		for i := range 8 {
			rows = append(rows, row{int32(1000 + b*100 + i), fmt.Sprintf("u%d", i%3), []string{"view", "click", "buy"}[i%3],
				hour.Add(time.Duration(i%4)*time.Hour + time.Duration(b*17+i)*time.Minute + 123456*time.Microsecond)})
		}
		batches = append(batches, rows)
	}
	runTransformTables(t, "sparkvoid", []goWrittenTable{{
		name: "spark_v1_void", from: "impala-spark-hour-identity-v1", fromMetadata: "metadata/v2.metadata.json", fromRows: 20,
		batches: batches, evolveAfter: 0,
		evolve: dropPartitionField("action"),
		setup: func(t testing.TB, tbl *table.Table) {
			t.Helper()
			cur := tbl.Spec()
			if tbl.Metadata().Version() != 1 || cur.ID() != 1 || cur.NumFields() != 2 {
				t.Fatalf("spark_v1_void: format %d, spec %v", tbl.Metadata().Version(), cur)
			}
			if f := cur.Field(1); f.FieldID != 1001 || !f.Transform.Equals(iceberg.VoidTransform{}) {
				t.Fatalf("spark_v1_void: the dropped field is %v, want void with field id 1001", f)
			}
		},
		sorts: [2]string{"action", "event_time DESC"},
	}})
}

// TestTwoDecimalPartitionFieldsRefusedInPlan: iceberg-go v0.7.0 cannot
// write a manifest of a spec with two decimal partition fields (it names
// every decimal's Avro type "fixed"), which Spark and Java write (naming
// them decimal_P_S). Compacting such files or merging such manifests would
// fail at the commit, after the rewrite; the plan refuses them, names the
// spec, and the table's other actions still run: the files of the older
// spec are compacted, and the second plan has nothing to do but the same
// refusals.
//
// The table: iceberg-go writes it under identity(d1), the spec evolves to
// identity(d1), identity(d2), and then the test edits the manifests the
// way a Java writer would have written them under the new spec (what
// iceberg-go cannot do): the partition struct gets d2 (field 1001, Avro
// fixed "decimal_12_3") with each file's d2 value, d1's type is renamed
// decimal_9_2, the manifests' partition-spec headers and the manifest
// list's partition_spec_id and partition summaries follow. Every file has
// one d1 and one d2 value, so its tuple under the new spec is exact: a
// valid table, as if written after the evolution. One more append, under
// identity(d1) again (the spec evolved back, spec 0), gives the plan files
// it can compact.
func TestTwoDecimalPartitionFieldsRefusedInPlan(t *testing.T) {
	duck := testenv.DuckDBReader(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	ns := "decimals"
	createNamespace(ctx, t, be.cat, ns)
	ident := table.Identifier{ns, "two_decimals"}
	loc := strings.TrimPrefix(be.location(ns, "two_decimals"), "file://")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "d1", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 3, Name: "d2", Type: iceberg.DecimalTypeOf(12, 3)},
	)
	rows := func(first int64) []row {
		var out []row
		for i := range int64(6) {
			k := i % 2 // d2 follows d1: one d2 value per file
			out = append(out, row{first + i, decimal128.FromI64(100 + 100*k), decimal128.FromI64(10_000 + 10_000*k)})
		}
		return out
	}
	g := goWrittenTable{name: "two_decimals", format: 2, schema: sc,
		spec:    iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "d1", Transform: iceberg.IdentityTransform{}}),
		batches: [][]row{rows(0), rows(10)}}
	tbl := evolveSpec(ctx, t, g.build(ctx, t, be, ident, loc), func(u *table.UpdateSpec) *table.UpdateSpec { return u.AddIdentity("d2") })
	if tbl.Metadata().DefaultPartitionSpec() != 1 {
		t.Fatalf("setup: spec %d after adding d2", tbl.Metadata().DefaultPartitionSpec())
	}
	moveManifestsToTwoDecimalSpec(t, tbl)
	// Back to identity(d1) (spec 0 again) and one more append: files the
	// plan can compact beside those it cannot.
	tbl = dropPartitionField("d2")(ctx, t, tbl)
	for _, first := range []int64{20, 30} {
		as, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		rec := buildBatch(t, as, rows(first))
		rdr, _ := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		rec.Release()
		if err != nil {
			t.Fatalf("append under spec %d: %v", tbl.Metadata().DefaultPartitionSpec(), err)
		}
	}
	bySpec := map[int32]int{}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		bySpec[task.File.SpecID()]++
		if task.File.SpecID() == 1 && len(task.File.Partition()) != 2 {
			t.Fatalf("setup: %s has tuple %v under spec 1", task.File.FilePath(), task.File.Partition())
		}
	}
	if bySpec[0] != 4 || bySpec[1] != 4 {
		t.Fatalf("setup: files per spec %v, want 4 and 4", bySpec)
	}
	goFP, err := goFingerprint(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	duckFP, err := duckFingerprint(ctx, duck, tbl)
	if err != nil {
		t.Fatal(err)
	}
	addr := catalogName + "." + ns + ".two_decimals"
	cfg := writeCorpusConfig(t, be, ns, corpusPolicies[0].hcl, "")
	now := time.Now()
	nowFn := func() time.Time { return now }
	p, res := planApply(ctx, t, cfg, nowFn, nil)
	// apply reports the plan's refusals as the table's error; any other
	// error, or an action's, is a failure.
	for _, tr := range res.Tables {
		if tr.Error != "" && !strings.HasPrefix(tr.Error, "the plan refused actions: ") {
			t.Errorf("apply %s: %s", tr.Address, tr.Error)
		}
		for _, a := range tr.Actions {
			if a.Error != "" {
				t.Errorf("apply %s: %s: %s", tr.Address, a.Type, a.Error)
			}
		}
	}
	tp := findTable(t, p, addr)
	a := actionOf(tp, diff.Compact)
	if a == nil || a.Compact.InputFiles != 4 {
		t.Fatalf("want spec 0's 4 files compacted: %v", actionTypes(tp))
	}
	for _, gr := range a.Compact.Groups {
		if gr.SpecID != 0 {
			t.Errorf("a group of spec %d planned", gr.SpecID)
		}
	}
	wantRefused := map[string]string{
		"compact":           "4 data files in 2 partitions of spec 1 are not compacted: partition spec 1 has 2 decimal fields (d1 decimal(9, 2), d2 decimal(12, 3))",
		"rewrite_manifests": "data manifests of spec 1 are not rewritten: partition spec 1 has 2 decimal fields",
	}
	for action, want := range wantRefused {
		if !slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool { return r.Action == action && strings.Contains(r.Reason, want) }) {
			t.Errorf("no %s refusal saying %q: %+v", action, want, tp.Refusals)
		}
	}
	tbl, err = be.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := goFingerprint(ctx, tbl); err != nil || !got.equal(goFP) {
		t.Errorf("icewright's reader after apply: %v, %v, before %v", got, err, goFP)
	}
	if got, err := duckFingerprint(ctx, duck, tbl); err != nil || !got.equal(duckFP) {
		t.Errorf("DuckDB after apply: %v, %v, before %v", got, err, duckFP)
	}
	requireReferencedPresent(ctx, t, "two_decimals", tbl)
	second := findTable(t, planOnly(ctx, t, cfg, nowFn), addr)
	if len(second.Actions) > 0 || len(second.Refusals) != len(tp.Refusals) {
		t.Errorf("second plan: actions %v, refusals %+v; want none and the same refusals", actionTypes(second), second.Refusals)
	}
}

// moveManifestsToTwoDecimalSpec rewrites the data manifests of tbl's
// current snapshot, written under spec 0 (identity(d1)), into spec 1
// (identity(d1), identity(d2)) as a Java writer names it; see
// TestTwoDecimalPartitionFieldsRefusedInPlan. Each file's d2 value is
// read from its lower bound (one value per file).
func moveManifestsToTwoDecimalSpec(t testing.TB, tbl *table.Table) {
	t.Helper()
	var fields []iceberg.PartitionField
	for _, f := range tbl.Metadata().PartitionSpecByID(1).Fields() {
		fields = append(fields, f)
	}
	spec1, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	local := func(p string) string { return strings.TrimPrefix(p, "file://") }
	decimal := func(name string, p, s int) map[string]any {
		return map[string]any{"type": "fixed", "name": name, "size": internalDecimalBytes(p), "logicalType": "decimal", "precision": p, "scale": s}
	}
	list := local(tbl.CurrentSnapshot().ManifestList)
	lrecs, lmeta, lschema := readAvro(t, list)
	for _, lr := range lrecs {
		path := local(lr["manifest_path"].(string))
		recs, meta, schema := readAvro(t, path)
		var doc map[string]any
		if err := json.Unmarshal([]byte(schema.String()), &doc); err != nil {
			t.Fatal(err)
		}
		// manifest_entry.data_file.partition (record r102)
		for _, f := range doc["fields"].([]any) {
			fm := f.(map[string]any)
			if fm["name"] != "data_file" {
				continue
			}
			for _, df := range fm["type"].(map[string]any)["fields"].([]any) {
				dfm := df.(map[string]any)
				if dfm["name"] != "partition" {
					continue
				}
				part := dfm["type"].(map[string]any)
				fields := part["fields"].([]any)
				d1 := fields[0].(map[string]any)
				d1["type"] = []any{"null", decimal("decimal_9_2", 9, 2)}
				part["fields"] = append(fields, map[string]any{"name": "d2", "type": []any{"null", decimal("decimal_12_3", 12, 3)}, "field-id": 1001})
			}
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		newSchema, err := avro.Parse(string(raw))
		if err != nil {
			t.Fatalf("edited manifest schema: %v", err)
		}
		for _, r := range recs {
			df := r["data_file"].(map[string]any)
			var lower []byte
			for _, kv := range df["lower_bounds"].([]any) {
				if e := kv.(map[string]any); e["key"] == int32(3) {
					lower = e["value"].([]byte)
				}
			}
			if lower == nil {
				t.Fatalf("no lower bound of d2 in %v", df["file_path"])
			}
			unscaled := new(big.Int).SetBytes(lower) // positive values
			df["partition"].(map[string]any)["d2"] = new(big.Rat).SetFrac(unscaled, big.NewInt(1000))
		}
		meta["partition-spec"] = spec1
		meta["partition-spec-id"] = []byte("1")
		size := writeAvro(t, path, newSchema, meta, recs)
		lr["manifest_length"] = size
		lr["partition_spec_id"] = int32(1)
		if parts, ok := lr["partitions"].([]any); ok {
			lr["partitions"] = append(parts, map[string]any{"contains_null": false, "contains_nan": nil, "lower_bound": nil, "upper_bound": nil})
		}
	}
	writeAvro(t, list, lschema, lmeta, lrecs)
}

// internalDecimalBytes is the fixed size of a decimal of precision p (the
// spec's minimum bytes for 10^p - 1, signed).
func internalDecimalBytes(p int) int {
	n := 1
	for ; new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)) < 0; n++ {
	}
	return n
}

func readAvro(t testing.TB, path string) ([]map[string]any, map[string][]byte, *avro.Schema) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ocf.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	meta := map[string][]byte{}
	for k, v := range rd.Metadata() {
		if k != "avro.schema" && k != "avro.codec" {
			meta[k] = v
		}
	}
	var recs []map[string]any
	for {
		var r map[string]any
		if err := rd.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs, meta, rd.Schema()
}

func writeAvro(t testing.TB, path string, schema *avro.Schema, meta map[string][]byte, recs []map[string]any) int64 {
	t.Helper()
	var out bytes.Buffer
	w, err := ocf.NewWriter(&out, schema, ocf.WithMetadata(meta), ocf.WithCodec(ocf.DeflateCodec(-1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Encode(r); err != nil {
			t.Fatalf("encode %s: %v", path, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(out.Len())
}
