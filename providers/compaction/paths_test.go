package compaction

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestFileURIOutputPathIsLiteral: at a file:// location, an output file's
// recorded path names the file as DuckDB and Java read it (literally, no
// percent-decoding). Its partition directory would have escapes
// (s=%C5%BC, iceberg-go's local IO creates s=żó): the file goes into the
// data directory itself. Partition values without escapes keep their
// Hive-style directory.
func TestFileURIOutputPathIsLiteral(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t) // its warehouse is a file:// URI
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "s_trunc", Transform: iceberg.TruncateTransform{Width: 2}})
	tbl, err := e.cat.CreateTable(ctx, table.Identifier{"ns", "paths"}, sc, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tbl.Location(), "file://") {
		t.Fatalf("setup: location %s is not a file:// URI", tbl.Location())
	}
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i, s := range []string{"żółw", "żółty", "abc", "a b"} {
			b.Field(0).(*array.Int64Builder).Append(int64(c*10 + i))
			b.Field(1).(*array.StringBuilder).Append(s)
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = appendBatch(t, tbl, rec)
		rec.Release()
	}
	before := rowStrings(t, tbl)
	if _, err := Run(ctx, tbl, groupsAll(t, tbl), Options{Strategy: Binpack, Catalog: e.cat}); err != nil {
		t.Fatal(err)
	}
	after := e.load(t, "paths")
	requireSameRows(t, before, rowStrings(t, after))
	dirs := map[string]bool{}
	for _, task := range liveTasks(t, after) {
		p := task.File.FilePath()
		if _, err := os.Stat(strings.TrimPrefix(p, "file://")); err != nil {
			t.Errorf("recorded path %s, read literally, is no file: %v", p, err)
		}
		dirs[p[strings.LastIndex(p[:strings.LastIndex(p, "/")], "/")+1:strings.LastIndex(p, "/")]] = true
	}
	for _, want := range []string{"data", "s_trunc=ab", "s_trunc=a+"} {
		if !dirs[want] {
			t.Errorf("no output in directory %s; directories %v", want, dirs)
		}
	}
}
