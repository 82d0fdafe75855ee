package providers

// Helpers for the execution tests: a real sqlite SQL catalog and a file
// warehouse under t.TempDir(), real iceberg-go tables, real appends and full
// scans. (providers/testkit will hold shared versions; these stay local so
// the exec tests do not depend on it.)

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/internal/lakehouse"
	"github.com/iceops/iceops/providers/internal/store"
)

type execLake struct {
	t     *testing.T
	dir   string
	db    *sql.DB
	cat   *sqlcat.Catalog
	name  string
	ident table.Identifier
}

func newExecLake(t *testing.T) *execLake {
	t.Helper()
	dir := t.TempDir()
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh := filepath.Join(dir, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		t.Fatal(err)
	}
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, iceberg.Properties{"warehouse": wh})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(context.Background(), table.Identifier{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	return &execLake{t: t, dir: dir, db: db, cat: cat, name: "lake", ident: table.Identifier{"sales", "orders"}}
}

var execSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
)

func (l *execLake) create(props iceberg.Properties) *table.Table {
	l.t.Helper()
	tbl, err := l.cat.CreateTable(context.Background(), l.ident, execSchema, catalog.WithProperties(props))
	if err != nil {
		l.t.Fatal(err)
	}
	return tbl
}

func (l *execLake) load() *table.Table {
	l.t.Helper()
	tbl, err := l.cat.LoadTable(context.Background(), l.ident)
	if err != nil {
		l.t.Fatal(err)
	}
	return tbl
}

// appendRows commits one snapshot with ids [from, from+n).
func appendRows(t *testing.T, tbl *table.Table, from, n int64) *table.Table {
	t.Helper()
	next, err := appendRowsErr(tbl, from, n)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func appendRowsErr(tbl *table.Table, from, n int64) (*table.Table, error) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append([]string{"eu", "us", "ap"}[i%3])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	return tbl.AppendTable(context.Background(), at, 1024, nil)
}

// scanIDs reads every live row of the current snapshot.
func scanIDs(t *testing.T, tbl *table.Table) []int64 {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var ids []int64
	col := at.Column(0)
	for _, ch := range col.Data().Chunks() {
		arr := ch.(*array.Int64)
		for i := range arr.Len() {
			ids = append(ids, arr.Value(i))
		}
	}
	slices.Sort(ids)
	return ids
}

func (l *execLake) backdate(tbl *table.Table, d time.Duration) *table.Table {
	l.t.Helper()
	if _, err := lakehouse.Backdate(context.Background(), l.db, l.name, tbl, d); err != nil {
		l.t.Fatal(err)
	}
	return l.load()
}

// filesUnder lists every regular file under the table's location.
func filesUnder(t *testing.T, tbl *table.Table) map[string]bool {
	t.Helper()
	root, ok := store.LocalPath(tbl.Location())
	if !ok {
		t.Fatalf("table location %q is not local", tbl.Location())
	}
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out[p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertAllReferencedExist checks every file any snapshot reaches (with
// deleted entries) and every metadata file exists.
func assertAllReferencedExist(t *testing.T, tbl *table.Table) {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	var missing []string
	err = walkReachable(context.Background(), fs, meta, allSnapshotIDs(meta), false, func(p string, _ int64, _ string) error {
		lp, ok := store.LocalPath(p)
		if !ok {
			return nil
		}
		if _, err := os.Stat(lp); err != nil {
			missing = append(missing, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reachable files: %v", err)
	}
	if len(missing) > 0 {
		t.Fatalf("%d referenced files are missing, e.g. %s", len(missing), strings.Join(missing[:min(3, len(missing))], ", "))
	}
}

func localOf(t *testing.T, p string) string {
	t.Helper()
	lp, ok := store.LocalPath(p)
	if !ok {
		t.Fatalf("%q is not local", p)
	}
	return lp
}

func seq(from, n int64) []int64 {
	out := make([]int64, 0, n)
	for i := from; i < from+n; i++ {
		out = append(out, i)
	}
	return out
}

func mustEqualIDs(t *testing.T, got, want []int64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("rows differ: got %d rows, want %d (first got %v)", len(got), len(want), got[:min(5, len(got))])
	}
}

var _ = fmt.Sprintf

// expiryEstimate is what the plan shows for expiring ids of tbl as it is
// now (estimateFreed, the walk Session.EstimateExpiry runs), so a test can
// hold the execution to the plan's figure.
func expiryEstimate(ctx context.Context, tbl *table.Table, ids []int64) (files, bytes int64, err error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	return estimateFreed(ctx, fs, tbl.Metadata(), ids, nil)
}
