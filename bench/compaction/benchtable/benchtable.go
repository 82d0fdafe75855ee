// Package benchtable builds the compaction benchmark table: a sqlite SQL
// catalog named "default" in a directory, and `bench.events`, partitioned by
// identity(region), filled by many small appends (the shape compaction is
// for). Used by the compactbench command and by the go test benchmarks.
package benchtable

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// Ident is the benchmark table.
var Ident = table.Identifier{"bench", "events"}

// OpenCatalog opens (creating) the catalog of dir.
func OpenCatalog(dir string) (*sqlcat.Catalog, *sql.DB, error) {
	if err := os.MkdirAll(filepath.Join(dir, "warehouse"), 0o755); err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(sqliteshim.ShimName, "file:"+filepath.Join(dir, "catalog.db"))
	if err != nil {
		return nil, nil, err
	}
	abs, err := filepath.Abs(filepath.Join(dir, "warehouse"))
	if err != nil {
		return nil, nil, err
	}
	cat, err := sqlcat.NewCatalog("default", db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + abs})
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return cat, db, nil
}

// Schema of the benchmark table.
func Schema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "x", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 5, Name: "y", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 6, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "val", Type: iceberg.PrimitiveTypes.Float64},
	)
}

// Setup creates the table with commits appends of rows rows spread over
// parts partitions; sorted gives it the sort order (x, y).
func Setup(ctx context.Context, cat *sqlcat.Catalog, commits, rows, parts int, sorted bool) error {
	return SetupLevel(ctx, cat, commits, rows, parts, sorted, 0)
}

// SetupLevel is Setup with the table's write.parquet.compression-level set
// to zstdLevel (0: unset, each writer's default: 3 for iceberg-go and Iceberg
// Java, 1 for PyIceberg, whose pyarrow defaults to 1). Every writer of the
// table, the setup's appends and each tool's rewrite, then compresses at
// that level.
func SetupLevel(ctx context.Context, cat *sqlcat.Catalog, commits, rows, parts int, sorted bool, zstdLevel int) error {
	if err := cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	props := iceberg.Properties{"format-version": "2", "write.parquet.compression-codec": "zstd"}
	if zstdLevel != 0 {
		props["write.parquet.compression-level"] = strconv.Itoa(zstdLevel)
	}
	opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec), catalog.WithProperties(props)}
	if sorted {
		so, err := table.NewSortOrder(1, []table.SortField{
			{SourceIDs: []int{4}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
			{SourceIDs: []int{5}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
		})
		if err != nil {
			return err
		}
		opts = append(opts, catalog.WithSortOrder(so))
	}
	tbl, err := cat.CreateTable(ctx, Ident, Schema(), opts...)
	if err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	as, err := table.SchemaToArrowSchema(Schema(), nil, true, false)
	if err != nil {
		return err
	}
	regions := []string{"eu", "us", "ap", "sa", "af", "oc", "an", "me"}[:parts]
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for c := range commits {
		rng := rand.New(rand.NewPCG(uint64(c), 7))
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(c*rows + i))
			b.Field(1).(*array.StringBuilder).Append(regions[i%len(regions)])
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(base + rng.Int64N(30*24*3600*1_000_000)))
			b.Field(3).(*array.Int32Builder).Append(rng.Int32N(1_000_000))
			b.Field(4).(*array.Int32Builder).Append(rng.Int32N(1_000_000))
			b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("user-%06d", rng.IntN(200_000)))
			b.Field(6).(*array.Float64Builder).Append(rng.NormFloat64() * 100)
		}
		rec := b.NewRecordBatch()
		b.Release()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		rec.Release()
		if err != nil {
			return fmt.Errorf("append %d: %w", c, err)
		}
	}
	return nil
}
