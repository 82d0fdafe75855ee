// Command planbench builds the tables of the plan benchmark
// (bench/plan/run.sh):
//
//	planbench setup -dir D [-commits 200] [-rows 1000] [-partitions 4] [-strays 20]
//	planbench wide  -dir D [-files 100000] [-commits 100]
//	planbench config -dir D [-table events]
//
// setup makes bench.events by real appends: `commits` appends of `rows` rows
// spread over `partitions` day partitions (one small Parquet file per
// partition per commit), in four batches whose history is shifted back by
// 3 days after each of the first three (so commits span about 9 days), plus
// stray files in the data directory: `strays` old ones (mtime 10 days ago)
// and a quarter as many young ones. Compaction, expiry and orphan removal
// all have work.
//
// wide makes bench.wide: `files` data-file entries committed with
// AddDataFiles in `commits` snapshots (first half backdated 10 days), for
// files that are never read: each exists on disk only as an empty file so
// that the orphan listing agrees with the metadata.
//
// config prints the icewright configuration that plans D's table TABLE
// with the benchmark policy (benchlake.Policy).
//
// The catalog is D/catalog.db (SQL catalog "default"), the warehouse
// D/warehouse: the layout iceberg-go's CLI reads with
// `--catalog sql --uri file:D/catalog.db`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/icewright/icewright/bench/plan/benchlake"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "planbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: planbench setup|wide|config -dir D ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "lakehouse directory")
	commits := fs.Int("commits", 0, "commits (default 200 for setup, 100 for wide)")
	rows := fs.Int("rows", 1000, "rows per append (setup)")
	parts := fs.Int("partitions", 4, "day partitions (setup)")
	strays := fs.Int("strays", 20, "old stray files (setup)")
	files := fs.Int("files", 100000, "data file entries (wide)")
	tbl := fs.String("table", "events", "table whose configuration to print (config)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	ctx := context.Background()
	lake, err := benchlake.Open(*dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	switch args[0] {
	case "setup":
		return benchlake.BuildEvents(ctx, lake, cmpOr(*commits, 200), *rows, *parts, *strays)
	case "wide":
		return benchlake.BuildWide(ctx, lake, *files, cmpOr(*commits, 100))
	case "config":
		_, err := fmt.Print(lake.Config(*tbl))
		return err
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func cmpOr(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
