package testkit

import (
	"context"
	"database/sql"
	"errors"
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

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// Orders is the executors' tests' lakehouse: a sqlite SQL catalog "lake"
// and a file warehouse under t.TempDir(), with the namespace sales for the
// table sales.orders (id, region), written by real appends of ids and read
// back by full scans.
type Orders struct {
	T     *testing.T
	Dir   string
	DB    *sql.DB
	Cat   *sqlcat.Catalog
	Name  string
	Ident table.Identifier
}

// NewOrders creates the lakehouse; the table is created by Create.
func NewOrders(t *testing.T) *Orders {
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
	return &Orders{T: t, Dir: dir, DB: db, Cat: cat, Name: "lake", Ident: table.Identifier{"sales", "orders"}}
}

// Config is a configuration with the lakehouse as catalog "lake".
func (l *Orders) Config() *config.Config {
	return &config.Config{Dir: l.T.TempDir(), Catalogs: []*config.Catalog{{Name: "lake", Type: "sql",
		URI: "sqlite:" + filepath.Join(l.Dir, "catalog.db"), Warehouse: filepath.Join(l.Dir, "warehouse"), Properties: map[string]string{}}}}
}

// OrdersSchema is sales.orders' schema.
var OrdersSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
)

// Create creates sales.orders with props.
func (l *Orders) Create(props iceberg.Properties) *table.Table {
	l.T.Helper()
	tbl, err := l.Cat.CreateTable(context.Background(), l.Ident, OrdersSchema, catalog.WithProperties(props))
	if err != nil {
		l.T.Fatal(err)
	}
	return tbl
}

// Load loads sales.orders from the catalog.
func (l *Orders) Load() *table.Table {
	l.T.Helper()
	tbl, err := l.Cat.LoadTable(context.Background(), l.Ident)
	if err != nil {
		l.T.Fatal(err)
	}
	return tbl
}

// Backdate shifts the table's history d into the past and reloads it.
func (l *Orders) Backdate(tbl *table.Table, d time.Duration) *table.Table {
	l.T.Helper()
	if _, err := lakehouse.Backdate(context.Background(), l.DB, l.Name, tbl, d); err != nil {
		l.T.Fatal(err)
	}
	return l.Load()
}

// History creates sales.orders with props and n snapshots of ten rows
// each, backdated by age, then one young snapshot.
func (l *Orders) History(props iceberg.Properties, n int, age time.Duration) *table.Table {
	l.T.Helper()
	tbl := l.Create(props)
	for i := range int64(n) {
		tbl = AppendIDs(l.T, tbl, i*10, 10)
	}
	tbl = l.Backdate(tbl, age)
	return AppendIDs(l.T, tbl, int64(n)*10, 10)
}

// SmallFiles is a compaction selection for which every file the tests
// write is small.
var SmallFiles = diff.CompactionSelection{
	Target: 128 << 20, Min: 96 << 20, Max: 230 << 20, MinInputFiles: 2, DeleteFileThreshold: 5, DeleteRatio: 0.3,
}

// AppendIDs commits one snapshot with ids [from, from+n).
func AppendIDs(t *testing.T, tbl *table.Table, from, n int64) *table.Table {
	t.Helper()
	next, err := AppendIDsErr(tbl, from, n)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// AppendIDsErr is AppendIDs returning the commit's error.
func AppendIDsErr(tbl *table.Table, from, n int64) (*table.Table, error) {
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

// OrderIDs reads every live id of the current snapshot, sorted.
func OrderIDs(t *testing.T, tbl *table.Table) []int64 {
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

// SnapshotIDs lists the table's snapshots in metadata order.
func SnapshotIDs(tbl *table.Table) []int64 { return reach.AllSnapshots(tbl.Metadata()) }

// FilesUnder lists every regular file under the table's location.
func FilesUnder(t *testing.T, tbl *table.Table) map[string]bool {
	t.Helper()
	root := LocalPath(t, tbl.Location())
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

// AssertAllReferencedExist checks that every file any snapshot reaches
// exists.
func AssertAllReferencedExist(t *testing.T, tbl *table.Table) {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	var missing []string
	err = reach.Walk(context.Background(), reach.Spec{Meta: meta, FS: fs, Snapshots: reach.AllSnapshots(meta), Consumers: []reach.Consumer{{File: func(f reach.File) error {
		lp, ok := store.LocalPath(f.Path)
		if !ok {
			return nil
		}
		if _, err := os.Stat(lp); err != nil {
			missing = append(missing, f.Path)
		}
		return nil
	}}}})
	if err != nil {
		t.Fatalf("reachable files: %v", err)
	}
	if len(missing) > 0 {
		t.Fatalf("%d referenced files are missing, e.g. %s", len(missing), strings.Join(missing[:min(3, len(missing))], ", "))
	}
}

// LocalPath is the OS path of a local file's location.
func LocalPath(t *testing.T, p string) string {
	t.Helper()
	lp, ok := store.LocalPath(p)
	if !ok {
		t.Fatalf("%q is not local", p)
	}
	return lp
}

// Seq is [from, from+n).
func Seq(from, n int64) []int64 {
	out := make([]int64, 0, n)
	for i := from; i < from+n; i++ {
		out = append(out, i)
	}
	return out
}

// MustEqualIDs fails unless got and want are the same ids.
func MustEqualIDs(t *testing.T, got, want []int64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("rows differ: got %d rows, want %d (first got %v)", len(got), len(want), got[:min(5, len(got))])
	}
}

// FlakyCatalog fails every commit as a lost connection does (a read
// timeout, a reset connection): the outcome is unknown to the caller. With
// Land set, the commit reaches the real catalog first, as a timeout after
// the server applied it would.
type FlakyCatalog struct {
	table.CatalogIO
	Land bool
}

func (f *FlakyCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if f.Land {
		if _, _, err := f.CatalogIO.CommitTable(ctx, ident, reqs, ups); err != nil {
			return nil, "", err
		}
	}
	return nil, "", errors.New("read tcp: i/o timeout")
}
