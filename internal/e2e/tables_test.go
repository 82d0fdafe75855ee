package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
)

// eventsSchema is the schema of the tables these tests create.
var eventsSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "category", Type: iceberg.PrimitiveTypes.String, Required: false},
)

// appendRows commits one snapshot that appends ids [from, from+n).
func appendRows(ctx context.Context, t testing.TB, tbl *table.Table, from, n int64) *table.Table {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatalf("arrow schema: %v", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("c%d", i%3))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	out, err := tbl.AppendTable(ctx, at, n, nil)
	if err != nil {
		t.Fatalf("append rows %d..%d to %v: %v", from, from+n, tbl.Identifier(), err)
	}
	return out
}

// countRows scans the table's current snapshot and returns its row count.
func countRows(ctx context.Context, t testing.TB, tbl *table.Table) int64 {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan %v: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	return at.NumRows()
}

// listFiles lists every object under root through the table's IO, which
// must support listing (orphan detection depends on it).
func listFiles(t testing.TB, fsys icebergio.IO, root string) []string {
	t.Helper()
	lio, ok := fsys.(icebergio.ListableIO)
	if !ok {
		t.Fatalf("IO %T for %s cannot list", fsys, root)
	}
	var out []string
	err := lio.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("list %s: %v", root, err)
	}
	return out
}

func countSuffix(paths []string, suffix string) int {
	n := 0
	for _, p := range paths {
		if strings.HasSuffix(p, suffix) {
			n++
		}
	}
	return n
}

// loadCatalog opens a catalog through iceberg-go's registry.
func loadCatalog(ctx context.Context, t testing.TB, name string, props map[string]string) catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(ctx, name, iceberg.Properties(props))
	if err != nil {
		t.Fatalf("open catalog %s (type %s): %v", name, props["type"], err)
	}
	return cat
}
