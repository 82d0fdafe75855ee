// Command zambench builds the tables of the Zamboni head-to-head
// (bench/zamboni/run.sh) that the other benchmarks' commands do not:
//
//	zambench lake   -dir D [-tables 200] [-commits 20] [-rows 100] [-partitions 4] [-strays 4]
//	zambench rename -dir D
//
// lake makes bench.t000, bench.t001, ... in D (catalog D/catalog.db,
// warehouse D/warehouse), each built like bench/plan's bench.events
// (benchlake.BuildEventsTable): appends in four batches whose history is
// shifted back 3 days after each of the first three, old (10 days) and young
// stray files. Compaction, expiry and orphan removal all have work on every
// table at both tools' defaults (5 days of snapshots, 3 days for orphans).
//
// rename moves every table and namespace of D's SQL catalog from the name
// the Go builders give it ("default") to "local": Zamboni's --local-warehouse
// opens D/catalog.db as a PyIceberg SQL catalog named "local", and both
// iceberg-go's and PyIceberg's SQL catalogs keep the name in every row. The
// icewright configuration of the bench names its catalog block "local" too.
// lake renames when it is done.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/internal/lakehouse"
)

// zamboniCatalog is the catalog name Zamboni's --local-warehouse uses.
const zamboniCatalog = "local"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zambench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: zambench lake|rename -dir D ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "lakehouse directory")
	tables := fs.Int("tables", 200, "tables (lake)")
	commits := fs.Int("commits", 20, "appends per table (lake)")
	rows := fs.Int("rows", 100, "rows per append (lake)")
	parts := fs.Int("partitions", 4, "day partitions per table (lake)")
	strays := fs.Int("strays", 4, "old stray files per table (lake; a quarter as many young ones)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	ctx := context.Background()
	switch args[0] {
	case "lake":
		if err := buildLake(ctx, *dir, *tables, *commits, *rows, *parts, *strays); err != nil {
			return err
		}
	case "rename":
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	return rename(ctx, *dir)
}

func buildLake(ctx context.Context, dir string, tables, commits, rows, parts, strays int) error {
	lake, err := benchlake.Open(dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	for i := range tables {
		if err := benchlake.BuildEventsTable(ctx, lake, fmt.Sprintf("t%03d", i), commits, rows, parts, strays); err != nil {
			return err
		}
	}
	return nil
}

func rename(ctx context.Context, dir string) error {
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, t := range []string{"iceberg_tables", "iceberg_namespace_properties"} {
		if _, err := db.ExecContext(ctx, "UPDATE "+t+" SET catalog_name = ? WHERE catalog_name = ?", zamboniCatalog, benchlake.CatalogName); err != nil {
			return fmt.Errorf("rename catalog in %s: %w", t, err)
		}
	}
	return nil
}
