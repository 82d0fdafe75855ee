// Package benchlake builds the tables of the plan and orphan benchmarks
// (bench/plan, bench/orphans): a sqlite SQL catalog named "default" at
// DIR/catalog.db with its warehouse at file://DIR/warehouse, which is what
// iceberg-go's CLI reaches with `--catalog sql --uri file:DIR/catalog.db`.
// Tables are made by real iceberg-go commits: appends of real Parquet rows,
// or AddDataFiles entries for files that are never read (only their paths
// and sizes matter to planning). History is made old by a time machine that
// shifts every timestamp of the table's metadata back and commits the new
// metadata version through the catalog with a compare-and-swap.
//
// Benchmarks only: nothing here runs under `go test ./...`.
package benchlake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icewright/icewright/internal/lakehouse"
)

// CatalogName is the SQL catalog's name: the iceberg CLI's default
// --catalog-name, and the label of the icewright catalog block.
const CatalogName = "default"

// Lake is an open benchmark lakehouse.
type Lake struct {
	Dir       string
	DB        *sql.DB
	Catalog   *sqlcat.Catalog
	Warehouse string // file:// URI
}

// Open opens (creating) DIR/catalog.db and DIR/warehouse.
func Open(dir string) (*Lake, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, "warehouse"), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open(sqliteshim.ShimName, "file:"+filepath.Join(abs, "catalog.db"))
	if err != nil {
		return nil, err
	}
	wh := "file://" + filepath.Join(abs, "warehouse")
	cat, err := sqlcat.NewCatalog(CatalogName, db, sqlcat.SQLite, iceberg.Properties{"warehouse": wh})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sql catalog: %w", err)
	}
	return &Lake{Dir: abs, DB: db, Catalog: cat, Warehouse: wh}, nil
}

// Close closes the catalog and its database.
func (l *Lake) Close() error {
	_ = l.Catalog.Close()
	return l.DB.Close()
}

// URI is the icewright catalog block's uri.
func (l *Lake) URI() string { return "sqlite:" + filepath.Join(l.Dir, "catalog.db") }

// HCL is the icewright catalog block for this lakehouse.
func (l *Lake) HCL() string {
	return fmt.Sprintf("catalog %q {\n  type      = \"sql\"\n  uri       = %q\n  warehouse = %q\n}\n",
		CatalogName, l.URI(), l.Warehouse)
}

// Policy is bench/plan's policy (compaction, retention and orphans), for
// the table default.bench.<name>: one text, which the benchmark in
// process and the scripts (`planbench config`, bench/lib.sh) both plan by.
const Policy = `
policy "bench" {
  target_file_size = "128MiB"

  compaction {
    min_input_files = 5
  }

  snapshot_retention {
    max_age       = "5d"
    min_snapshots = 3
  }

  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.5
  }
}

table "default.bench.%s" {
  policy = policy.bench
}
`

// Config is a whole icewright configuration: this lakehouse's catalog and
// Policy for the table default.bench.<name>.
func (l *Lake) Config(name string) string { return l.HCL() + fmt.Sprintf(Policy, name) }

// Schema is the benchmark tables' schema: the small event log of the demo
// and the test kit (lakehouse.EventsSchema).
func Schema() *iceberg.Schema { return lakehouse.EventsSchema() }

// DaySpec partitions Schema by day(event_ts).
func DaySpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{},
	})
}

// Day0 is the first day of the data.
var Day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// CreateTable creates ns.name partitioned by day(event_ts), format v2.
func (l *Lake) CreateTable(ctx context.Context, ns, name string, props iceberg.Properties) (*table.Table, error) {
	return CreateIn(ctx, l.Catalog, ns, name, props)
}

// CreateIn is CreateTable in any catalog (the fleet benchmark's REST one).
func CreateIn(ctx context.Context, cat catalog.Catalog, ns, name string, props iceberg.Properties) (*table.Table, error) {
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) && !strings.Contains(err.Error(), "already exists") {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	p := iceberg.Properties{"format-version": "2"}
	for k, v := range props {
		p[k] = v
	}
	spec := DaySpec()
	tbl, err := cat.CreateTable(ctx, table.Identifier{ns, name}, Schema(),
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(p))
	if err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	return tbl, nil
}

var kinds = []string{"click", "view", "purchase", "signup"}

// Append commits one append of n rows with ids from startID spread evenly
// over `days` day partitions from Day0 (so one data file per partition).
func Append(ctx context.Context, tbl *table.Table, startID int64, n, days int) (*table.Table, error) {
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for i := range n {
		id := startID + int64(i)
		ts := Day0.AddDate(0, 0, int(id%int64(days))).Add(time.Duration(id%86400) * time.Second)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.Int64Builder).Append(id % 97)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		b.Field(3).(*array.StringBuilder).Append(kinds[id%int64(len(kinds))])
		b.Field(4).(*array.StringBuilder).Append("payload-" + strconv.FormatInt(id, 10))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	defer at.Release()
	out, err := tbl.AppendTable(ctx, at, int64(n)+1, nil)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return out, nil
}

// SyntheticFile is one data file that exists only as a manifest entry (and,
// if the caller wants, as an empty file on disk).
type SyntheticFile struct {
	Path string // absolute local path, or a full location (s3://...)
	Day  int    // partition: days since Day0
	Size int64  // file_size_in_bytes recorded in the manifest
	Rows int64
}

// AddFiles commits one AddDataFiles snapshot with the given entries. The
// files are never opened.
func AddFiles(ctx context.Context, tbl *table.Table, files []SyntheticFile) (*table.Table, error) {
	dfs, err := DataFiles(tbl.Spec(), files)
	if err != nil {
		return nil, err
	}
	return AddDataFiles(ctx, tbl, dfs)
}

// AddDataFiles commits one AddDataFiles snapshot of dfs.
func AddDataFiles(ctx context.Context, tbl *table.Table, dfs []iceberg.DataFile) (*table.Table, error) {
	txn := tbl.NewTransaction()
	if err := txn.AddDataFiles(ctx, dfs, nil, table.WithoutDuplicateCheck()); err != nil {
		return nil, fmt.Errorf("add data files: %w", err)
	}
	out, err := txn.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit add data files: %w", err)
	}
	return out, nil
}

// DataFiles are the manifest entries of files in a table partitioned by
// DaySpec (a caller that replaces them later keeps them).
func DataFiles(spec iceberg.PartitionSpec, files []SyntheticFile) ([]iceberg.DataFile, error) {
	dfs := make([]iceberg.DataFile, 0, len(files))
	day0 := int32(Day0.Unix() / 86400)
	for _, f := range files {
		loc := f.Path
		if !strings.Contains(loc, "://") {
			loc = "file://" + loc
		}
		b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, loc, iceberg.ParquetFile,
			map[int]any{1000: day0 + int32(f.Day)}, nil, nil, f.Rows, f.Size)
		if err != nil {
			return nil, err
		}
		dfs = append(dfs, b.Build())
	}
	return dfs, nil
}

// DataDir is the local directory of the table's data files.
func DataDir(tbl *table.Table) string {
	return strings.TrimPrefix(tbl.Location(), "file://") + "/data"
}

// Backdate shifts every timestamp of the table's metadata (last-updated-ms,
// snapshots, snapshot log, metadata log) d into the past, records the
// previous metadata file in the metadata log as a commit does, and swaps the
// catalog row to the new metadata file only if it still points at the old
// one. iceberg-go stamps commits with the wall clock and has no update that
// rewrites existing snapshots' timestamps, hence this. It returns the
// reloaded table.
func (l *Lake) Backdate(ctx context.Context, tbl *table.Table, d time.Duration) (*table.Table, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	oldLoc := tbl.MetadataLocation()
	f, err := fsys.Open(oldLoc)
	if err != nil {
		return nil, fmt.Errorf("backdate: %w", err)
	}
	var raw bytes.Buffer
	_, err = raw.ReadFrom(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("backdate: %w", err)
	}
	doc, err := shift(raw.Bytes(), oldLoc, d.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("backdate: %w", err)
	}
	newLoc := nextMetadataLocation(oldLoc)
	w, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("backdate: IO %T cannot write", fsys)
	}
	if err := w.WriteFile(newLoc, doc); err != nil {
		return nil, fmt.Errorf("backdate: %w", err)
	}
	ident := tbl.Identifier()
	res, err := l.DB.ExecContext(ctx,
		`UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
		 WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`,
		newLoc, oldLoc, CatalogName, strings.Join(ident[:len(ident)-1], "."), ident[len(ident)-1], oldLoc)
	if err != nil {
		return nil, fmt.Errorf("backdate: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("backdate %v: the table moved", ident)
	}
	return l.Catalog.LoadTable(ctx, ident)
}

func shift(raw []byte, oldLoc string, ms int64) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 64-bit snapshot ids must survive
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	sub := func(v any) json.Number {
		n, _ := v.(json.Number).Int64()
		return json.Number(strconv.FormatInt(n-ms, 10))
	}
	for _, key := range []string{"snapshots", "snapshot-log", "metadata-log"} {
		list, _ := m[key].([]any)
		for _, e := range list {
			if obj, ok := e.(map[string]any); ok {
				if v, ok := obj["timestamp-ms"]; ok {
					obj["timestamp-ms"] = sub(v)
				}
			}
		}
	}
	m["last-updated-ms"] = sub(m["last-updated-ms"])
	log, _ := m["metadata-log"].([]any)
	m["metadata-log"] = append(log, map[string]any{"metadata-file": oldLoc, "timestamp-ms": m["last-updated-ms"]})
	return json.Marshal(m)
}

func nextMetadataLocation(oldLoc string) string {
	base := path.Base(oldLoc)
	version := 0
	if i := strings.IndexByte(base, '-'); i > 0 {
		version, _ = strconv.Atoi(base[:i])
	}
	// Not path.Dir: it would clean "file:///x" into "file:/x".
	return fmt.Sprintf("%s/%05d-%s.metadata.json", strings.TrimSuffix(oldLoc, "/"+base), version+1, uuid.NewString())
}

// Touch creates an empty file (and its directory) with the given mtime.
func Touch(p string, mtime time.Time) error {
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		if !os.IsNotExist(err) {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
	}
	if mtime.IsZero() {
		return nil
	}
	return os.Chtimes(p, mtime, mtime)
}
