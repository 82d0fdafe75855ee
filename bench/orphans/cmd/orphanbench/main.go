// Command orphanbench builds the orphan benchmark table and runs the two
// comparison scans of bench/orphans/run.sh; icewright itself runs as the built
// binary (`icewright plan` with an orphan-only policy).
//
//	orphanbench setup    -dir D -referenced N -orphans M [-commits C] [-per-dir 2000]
//	orphanbench baseline -dir D   # list the tree + read every manifest once
//	orphanbench iceberg  -dir D   # iceberg-go's Table.PlanOrphanFiles
//
// The table bench.orphans (catalog "default" at D/catalog.db, warehouse
// D/warehouse) has N data files committed with AddDataFiles in C snapshots,
// each an empty file on disk, and M unreferenced empty files with an mtime
// 10 days old. Files sit in day-partition directories of per-dir files
// each, orphans spread among them, so the tree's shape does not change with
// the scale: only the number of directories does.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/bench/plan/benchlake"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "orphanbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: orphanbench setup|baseline|iceberg -dir D ...")
	}
	fset := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fset.String("dir", "", "lakehouse directory")
	referenced := fset.Int("referenced", 200000, "referenced data files")
	orphans := fset.Int("orphans", 20000, "orphan files")
	commits := fset.Int("commits", 20, "AddDataFiles snapshots")
	perDir := fset.Int("per-dir", 2000, "referenced files per partition directory")
	if err := fset.Parse(args[1:]); err != nil {
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
		return setup(ctx, lake, *referenced, *orphans, *commits, *perDir)
	case "baseline":
		return baseline(ctx, lake)
	case "iceberg":
		return icebergScan(ctx, lake)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

var ident = table.Identifier{"bench", "orphans"}

func setup(ctx context.Context, lake *benchlake.Lake, referenced, orphans, commits, perDir int) error {
	tbl, err := lake.CreateTable(ctx, "bench", "orphans", nil)
	if err != nil {
		return err
	}
	data := benchlake.DataDir(tbl)
	dirs := max((referenced+perDir-1)/perDir, 1)
	dayDir := func(day int) string {
		return filepath.Join(data, "event_day="+benchlake.Day0.AddDate(0, 0, day).Format("2006-01-02"))
	}
	for d := range dirs {
		if err := os.MkdirAll(dayDir(d), 0o755); err != nil {
			return err
		}
	}
	// Two workers: creating millions of files is system-call bound.
	touch := func(paths []string, mtime time.Time) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(paths); i += 2 {
					if err := benchlake.Touch(paths[i], mtime); err != nil {
						errs[w] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	per := (referenced + commits - 1) / commits
	start := time.Now()
	for next := 0; next < referenced; {
		var batch []benchlake.SyntheticFile
		var paths []string
		for ; next < referenced && len(batch) < per; next++ {
			day := next % dirs
			p := filepath.Join(dayDir(day), benchlake.FileName(next))
			paths = append(paths, p)
			batch = append(batch, benchlake.SyntheticFile{Path: p, Day: day, Size: 4 << 20, Rows: 10000})
		}
		if err := touch(paths, time.Time{}); err != nil {
			return err
		}
		if tbl, err = benchlake.AddFiles(ctx, tbl, batch); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%d/%d referenced (%s)\n", next, referenced, time.Since(start).Round(time.Second))
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	var paths []string
	for i := range orphans {
		paths = append(paths, filepath.Join(dayDir(i%dirs), "orphan-"+benchlake.FileName(referenced+i)))
	}
	if err := touch(paths, old); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench.orphans: %d referenced data files in %d snapshots, %d orphans, %d directories (%s)\n",
		referenced, len(tbl.Metadata().Snapshots()), orphans, dirs, time.Since(start).Round(time.Second))
	return nil
}

// baseline is the floor the issue sets: list the table's directory tree
// (with each file's size and mtime, which an age guard needs) and read every
// manifest of every snapshot once (each distinct manifest once, every entry
// decoded), keeping nothing but counts.
func baseline(ctx context.Context, lake *benchlake.Lake) error {
	tbl, err := lake.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	var listed, bytes int64
	root := strings.TrimPrefix(tbl.Location(), "file://")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		listed++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		return err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var manifests, entries int64
	for _, snap := range tbl.Metadata().Snapshots() {
		ms, err := snap.Manifests(fsys)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			manifests++
			for e, err := range iceberg.EntriesWithProjection(fsys, m, false, iceberg.ManifestEntryProjection{}) {
				if err != nil {
					return err
				}
				_ = e.DataFile().FilePath()
				entries++
			}
		}
	}
	fmt.Printf("baseline: listed %d files (%d bytes); read %d manifests, %d entries\n", listed, bytes, manifests, entries)
	return nil
}

// icebergScan runs iceberg-go's own planner with the same age guard as the
// icewright policy (3 days). Only the counts are printed.
func icebergScan(ctx context.Context, lake *benchlake.Lake) error {
	tbl, err := lake.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(72*time.Hour))
	if err != nil {
		return err
	}
	fmt.Printf("iceberg-go PlanOrphanFiles: %d orphan files, %d bytes\n", len(plan.Files()), plan.TotalSizeBytes())
	return nil
}
