// Package testkit builds real Iceberg tables for tests across icewright: a
// sqlite SQL catalog in a directory, tables written with iceberg-go and
// arrow-go, backdated history, copies of the Spark-written fixtures, and row
// counts read back through a real scan. Every helper fails the test on error.
//
// It is importable from any package's tests (it is not a _test package) and
// imports iceberg-go, arrow-go, internal/lakehouse and providers/internal,
// never providers or its domain packages, so that their own tests can use
// it.
package testkit

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
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
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
)

// Lakehouse is a sqlite SQL catalog plus a local warehouse directory.
type Lakehouse struct {
	Name      string // catalog name (the label of the catalog block)
	Dir       string
	DBPath    string
	Warehouse string
	DB        *sql.DB
	Catalog   *sqlcat.Catalog
}

// NewLakehouse creates DIR/catalog.db and DIR/warehouse with a catalog named
// name. It is closed when the test ends.
func NewLakehouse(t testing.TB, dir, name string) *Lakehouse {
	t.Helper()
	l := &Lakehouse{
		Name:      name,
		Dir:       dir,
		DBPath:    filepath.Join(dir, "catalog.db"),
		Warehouse: filepath.Join(dir, "warehouse"),
	}
	if err := os.MkdirAll(l.Warehouse, 0o755); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	db, err := lakehouse.OpenSQLiteDB(l.DBPath)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	l.DB = db
	cat, err := lakehouse.NewSQLCatalog(name, db, sqlcat.SQLite, iceberg.Properties{"warehouse": l.Warehouse})
	if err != nil {
		_ = db.Close()
		t.Fatalf("testkit: %v", err)
	}
	l.Catalog = cat
	t.Cleanup(func() {
		_ = cat.Close()
		_ = db.Close()
	})
	return l
}

// URI is the catalog block's uri: "sqlite:/abs/catalog.db".
func (l *Lakehouse) URI() string { return "sqlite:" + l.DBPath }

// ConfigCatalog is the catalog block for this lakehouse.
func (l *Lakehouse) ConfigCatalog() *config.Catalog {
	return &config.Catalog{Name: l.Name, Type: "sql", URI: l.URI(), Warehouse: l.Warehouse, Properties: map[string]string{}}
}

// HCL is the catalog block in the configuration language.
func (l *Lakehouse) HCL() string {
	return "catalog \"" + l.Name + "\" {\n  type      = \"sql\"\n  uri       = \"" + l.URI() + "\"\n  warehouse = \"" + l.Warehouse + "\"\n}\n"
}

// Ident turns "ns.table" (or "a.b.table") into an identifier.
func Ident(name string) table.Identifier { return strings.Split(name, ".") }

// TableOptions shape CreateTable.
type TableOptions struct {
	Partitioned   bool // day(event_ts)
	Properties    map[string]string
	Location      string
	FormatVersion int // default 2
}

// CreateTable creates an events table (lakehouse.EventsSchema) at name
// ("ns.table"), creating the namespace levels as needed.
func (l *Lakehouse) CreateTable(t testing.TB, name string, o TableOptions) *table.Table {
	t.Helper()
	ctx := context.Background()
	ident := Ident(name)
	ns := ident[:len(ident)-1]
	for i := 1; i <= len(ns); i++ {
		if err := l.Catalog.CreateNamespace(ctx, ns[:i], nil); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("testkit: create namespace %v: %v", ns[:i], err)
		}
	}
	props := iceberg.Properties{}
	for k, v := range o.Properties {
		props[k] = v
	}
	if o.FormatVersion == 0 {
		o.FormatVersion = 2
	}
	props["format-version"] = strconv.Itoa(o.FormatVersion)
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if o.Partitioned {
		opts = append(opts, catalog.WithPartitionSpec(lakehouse.DaySpec()))
	}
	if o.Location != "" {
		opts = append(opts, catalog.WithLocation(o.Location))
	}
	tbl, err := l.Catalog.CreateTable(ctx, ident, lakehouse.EventsSchema(), opts...)
	if err != nil {
		t.Fatalf("testkit: create table %s: %v", name, err)
	}
	return tbl
}

// Day0 is the first day of test data; rows of commit i fall on
// Day0 + (i mod days).
var Day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// Append commits `commits` appends of rowsPerCommit rows each; commit i
// writes to day i mod days (days <= 1: all on Day0). Row ids continue from
// the table's current record count so repeated calls never collide. It
// returns the table after the last commit.
func Append(t testing.TB, tbl *table.Table, commits, rowsPerCommit, days int) *table.Table {
	t.Helper()
	ctx := context.Background()
	start := int64(0)
	if s := tbl.CurrentSnapshot(); s != nil && s.Summary != nil {
		if v, ok := s.Summary.Properties["total-records"]; ok {
			start = parseInt(v)
		}
	}
	if days < 1 {
		days = 1
	}
	for i := range commits {
		day := Day0.AddDate(0, 0, i%days)
		var err error
		tbl, err = lakehouse.AppendEvents(ctx, tbl, start, rowsPerCommit, day, 1, nil)
		if err != nil {
			t.Fatalf("testkit: %v", err)
		}
		start += int64(rowsPerCommit)
	}
	return tbl
}

func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Reload loads the table again from the catalog.
func (l *Lakehouse) Reload(t testing.TB, name string) *table.Table {
	t.Helper()
	tbl, err := l.Catalog.LoadTable(context.Background(), Ident(name))
	if err != nil {
		t.Fatalf("testkit: load %s: %v", name, err)
	}
	return tbl
}

// Backdate shifts the table's whole history d into the past (the time
// machine: see lakehouse.Backdate) and returns the reloaded table.
func (l *Lakehouse) Backdate(t testing.TB, tbl *table.Table, d time.Duration) *table.Table {
	t.Helper()
	if _, err := lakehouse.Backdate(context.Background(), l.DB, l.Name, tbl, d); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return l.Reload(t, strings.Join(tbl.Identifier(), "."))
}

// DeletePositions deletes the rows matching filter with merge-on-read, so
// iceberg-go writes position delete files (deletion vectors on v3 tables).
func DeletePositions(t testing.TB, tbl *table.Table, filter iceberg.BooleanExpression) *table.Table {
	t.Helper()
	ctx := context.Background()
	txn := tbl.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"write.delete.mode": "merge-on-read"}); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatalf("testkit: set merge-on-read: %v", err)
	}
	out, err := next.Delete(ctx, filter, nil)
	if err != nil {
		t.Fatalf("testkit: delete: %v", err)
	}
	return out
}

// ScanRows reads the table's current snapshot through iceberg-go's scan
// (applying deletes) and returns the number of live rows.
func ScanRows(t testing.TB, tbl *table.Table) int64 {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return 0
	}
	_, itr, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("testkit: scan: %v", err)
	}
	var n int64
	for rec, err := range itr {
		if err != nil {
			t.Fatalf("testkit: scan: %v", err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n
}

// ScanIDs returns the multiset of event_id values (id -> count) of the live
// rows, for tests that must prove rows were preserved exactly.
func ScanIDs(t testing.TB, tbl *table.Table) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	_, itr, err := tbl.Scan(table.WithSelectedFields("event_id")).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("testkit: scan: %v", err)
	}
	for rec, err := range itr {
		if err != nil {
			t.Fatalf("testkit: scan: %v", err)
		}
		col := rec.Column(0).(*array.Int64)
		for i := range col.Len() {
			out[col.Value(i)]++
		}
		rec.Release()
	}
	return out
}

// Fixtures are the Spark-written tables in internal/testdata/tables.
var Fixtures = []string{
	"duckdb-spark-lineitem-mor",
	"glaredb-spark-lineitem-v1-partitioned",
	"glaredb-spark-lineitem-v2-versioned",
}

// CopyFixture copies fixture name (one of Fixtures) to dstDir, rewriting
// every path in its metadata, manifest lists and manifests to dstDir, and
// returns the current metadata location.
func CopyFixture(t testing.TB, name, dstDir string) string {
	t.Helper()
	loc, err := lakehouse.CopyFixture(testenv.Fixture(t, name), dstDir)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return loc
}

// RegisterSQL registers a table by metadata location in the lakehouse's
// catalog (iceberg-go v0.7.0's SQL catalog has no RegisterTable) and loads it.
func (l *Lakehouse) RegisterSQL(t testing.TB, name, metadataLocation string) *table.Table {
	t.Helper()
	if err := lakehouse.RegisterSQL(context.Background(), l.DB, l.Name, Ident(name), metadataLocation); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return l.Reload(t, name)
}

// AddFixture copies a fixture into the lakehouse's warehouse and registers
// it as name ("ns.table").
func (l *Lakehouse) AddFixture(t testing.TB, fixture, name string) *table.Table {
	t.Helper()
	dst := filepath.Join(l.Warehouse, "fixtures", strings.ReplaceAll(name, ".", "_"))
	return l.RegisterSQL(t, name, CopyFixture(t, fixture, dst))
}

// DeleteEquality commits an equality delete on event_id for the given ids
// (an unpartitioned v2+ table: the delete rows carry only the key column).
func DeleteEquality(t testing.TB, tbl *table.Table, ids ...int64) *table.Table {
	t.Helper()
	return DeleteEqualityOn(t, tbl, "event_id", func(b array.Builder) {
		for _, id := range ids {
			b.(*array.Int64Builder).Append(id)
		}
	})
}

// DeleteEqualityOn commits an equality delete on one column of an
// unpartitioned v2+ table; values appends the deleted values to a builder
// of the column's Arrow type.
func DeleteEqualityOn(t testing.TB, tbl *table.Table, column string, values func(array.Builder)) *table.Table {
	t.Helper()
	ctx := context.Background()
	key, ok := tbl.Schema().FindFieldByName(column)
	if !ok {
		t.Fatalf("testkit: table has no %s column", column)
	}
	asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, key), nil, true, false)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	values(b.Field(0))
	rec := b.NewRecordBatch()
	defer rec.Release()
	records := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	txn := tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(ctx, []int{key.ID}, records, nil); err != nil {
		t.Fatalf("testkit: equality delete: %v", err)
	}
	out, err := txn.Commit(ctx)
	if err != nil {
		t.Fatalf("testkit: equality delete commit: %v", err)
	}
	return out
}

// AddSyntheticFiles commits `commits` snapshots that each add files data
// files that are never written: only their manifest entries exist (paths
// under <location>/data/synthetic/, size bytes each, 100 records each). It
// is for scale tests of planning, which reads manifests and never opens a
// data file. On a partitioned events table the files spread over `days`
// day partitions from Day0.
func AddSyntheticFiles(t testing.TB, tbl *table.Table, commits, files, days int, size int64) *table.Table {
	t.Helper()
	ctx := context.Background()
	spec := tbl.Spec()
	partitioned := !spec.IsUnpartitioned()
	day0 := int32(Day0.Unix() / 86400)
	n := 0
	for c := range commits {
		dfs := make([]iceberg.DataFile, 0, files)
		for range files {
			part := map[int]any{}
			if partitioned {
				part[spec.Field(0).FieldID] = day0 + int32(n%max(days, 1))
			}
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData,
				tbl.Location()+"/data/synthetic/"+strconv.Itoa(c)+"-"+strconv.Itoa(n)+".parquet",
				iceberg.ParquetFile, part, nil, nil, 100, size)
			if err != nil {
				t.Fatalf("testkit: %v", err)
			}
			dfs = append(dfs, b.Build())
			n++
		}
		txn := tbl.NewTransaction()
		if err := txn.AddDataFiles(ctx, dfs, nil); err != nil {
			t.Fatalf("testkit: add data files: %v", err)
		}
		var err error
		if tbl, err = txn.Commit(ctx); err != nil {
			t.Fatalf("testkit: commit: %v", err)
		}
	}
	return tbl
}

// WriteStray writes a file of size bytes at rel under the table location
// (e.g. "data/stray.parquet") with mtime at, as a failed writer leaves
// behind, and returns its path.
func WriteStray(t testing.TB, tbl *table.Table, rel string, size int, at time.Time) string {
	t.Helper()
	p := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return p
}

// SetRef creates or moves a tag or branch ("tag" | "branch") to snapshotID
// with optional retention (zero values leave a setting unset), and returns
// the reloaded table.
func (l *Lakehouse) SetRef(t testing.TB, tbl *table.Table, name, kind string, snapshotID int64, maxRefAgeMs, maxSnapshotAgeMs int64, minSnapshots int) *table.Table {
	t.Helper()
	rt := table.TagRef
	if kind == "branch" {
		rt = table.BranchRef
	}
	if _, _, err := l.Catalog.CommitTable(context.Background(), tbl.Identifier(), nil, []table.Update{
		table.NewSetSnapshotRefUpdate(name, snapshotID, rt, maxRefAgeMs, maxSnapshotAgeMs, minSnapshots),
	}); err != nil {
		t.Fatalf("testkit: set ref %s: %v", name, err)
	}
	return l.Reload(t, strings.Join(tbl.Identifier(), "."))
}

// AddCorpusTable copies the corpus table dir (internal/testdata/tables/dir,
// written by another engine; current is its current metadata file) into
// the lakehouse's warehouse and registers it as name ("ns.table"). edit,
// when set, rewrites the copied current metadata file's text first and
// must change it.
func (l *Lakehouse) AddCorpusTable(t testing.TB, dir, current, name string, edit func(string) string) *table.Table {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(t), "internal", "testdata", "tables", dir)
	md := CopyTable(t, src, filepath.Join(l.Warehouse, "corpus", strings.ReplaceAll(name, ".", "_")), current)
	if edit != nil {
		p := strings.TrimPrefix(md, "file://")
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("testkit: %v", err)
		}
		edited := edit(string(raw))
		if edited == string(raw) {
			t.Fatalf("testkit: the edit of %s changed nothing", p)
		}
		if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
			t.Fatalf("testkit: %v", err)
		}
	}
	return l.RegisterSQL(t, name, md)
}

// CopyTable copies a corpus table (srcDir is its location) to dstDir,
// rewriting every path inside it (lakehouse.CopyTable), and returns the
// location of its current metadata file, current being relative to srcDir.
// opts choose how the paths are spelled (lakehouse.FileURIs).
func CopyTable(t testing.TB, srcDir, dstDir, current string, opts ...lakehouse.CopyOption) string {
	t.Helper()
	loc, err := lakehouse.CopyTable(srcDir, dstDir, current, opts...)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return loc
}

// CommitDataFileAt commits one snapshot that adds a data file like like
// (its record count and size; unpartitioned) under path, replacing
// replace when it is set. It writes no file: what is at path is the
// caller's. Tests use it to name one file by several spellings.
func CommitDataFileAt(t testing.TB, tbl *table.Table, like iceberg.DataFile, path string, replace iceberg.DataFile) *table.Table {
	t.Helper()
	ctx := context.Background()
	b, err := iceberg.NewDataFileBuilder(tbl.Metadata().PartitionSpec(), iceberg.EntryContentData, path, iceberg.ParquetFile,
		nil, nil, nil, like.Count(), like.FileSizeBytes())
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	txn := tbl.NewTransaction()
	if replace != nil {
		err = txn.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{replace}, []iceberg.DataFile{b.Build()}, nil)
	} else {
		err = txn.AddDataFiles(ctx, []iceberg.DataFile{b.Build()}, nil)
	}
	if err != nil {
		t.Fatalf("testkit: commit %s: %v", path, err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatalf("testkit: commit %s: %v", path, err)
	}
	return next
}

// CopyAs copies a table of the lakehouse (all its files, every path inside
// them rewritten: lakehouse.CopyTable, with opts such as
// lakehouse.SnapshotIDs) under the warehouse and registers the copy as name
// ("ns.table").
func (l *Lakehouse) CopyAs(t testing.TB, tbl *table.Table, name string, opts ...lakehouse.CopyOption) *table.Table {
	t.Helper()
	src := strings.TrimPrefix(tbl.Location(), "file://")
	current, err := filepath.Rel(src, strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	dst := filepath.Join(l.Warehouse, "copies", strings.ReplaceAll(name, ".", "_"))
	return l.RegisterSQL(t, name, CopyTable(t, src, dst, current, opts...))
}

// DropPartitionSource removes partition field field from tbl's spec and
// then drops column (its source) from the schema, two commits, as Spark's
// ALTER TABLE ... DROP PARTITION FIELD and DROP COLUMN do: the files
// written before stay live in the old spec, whose source column the
// current schema no longer has.
func DropPartitionSource(t testing.TB, tbl *table.Table, field, column string) *table.Table {
	t.Helper()
	ctx := context.Background()
	txn := tbl.NewTransaction()
	if err := txn.UpdateSpec(true).RemoveField(field).Commit(); err != nil {
		t.Fatalf("testkit: remove partition field %s: %v", field, err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatalf("testkit: remove partition field %s: %v", field, err)
	}
	txn = tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).DeleteColumn([]string{column}).Commit(); err != nil {
		t.Fatalf("testkit: drop column %s: %v", column, err)
	}
	if tbl, err = txn.Commit(ctx); err != nil {
		t.Fatalf("testkit: drop column %s: %v", column, err)
	}
	return tbl
}

// AppendRows commits one append of rows to a table of a long and a string
// column: ids[i] and strs[i] make row i.
func AppendRows(t testing.TB, tbl *table.Table, ids []int64, strs []string) *table.Table {
	t.Helper()
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(strs[i])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
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
