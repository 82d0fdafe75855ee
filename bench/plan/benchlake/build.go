package benchlake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// BuildEvents makes bench.events by real appends: commits appends of rows
// rows spread over parts day partitions (one small Parquet file per
// partition per commit), in four batches whose history is shifted back by
// 3 days after each of the first three (commits span about 9 days), plus
// stray files in the data directory: strays old ones (mtime 10 days ago)
// and a quarter as many young ones. Compaction, expiry and orphan removal
// all have work.
func BuildEvents(ctx context.Context, lake *Lake, commits, rows, parts, strays int) error {
	return BuildEventsTable(ctx, lake, "events", commits, rows, parts, strays)
}

// BuildEventsTable is BuildEvents for the table bench.NAME (the Zamboni
// head-to-head's maintenance run makes many of them).
func BuildEventsTable(ctx context.Context, lake *Lake, name string, commits, rows, parts, strays int) error {
	tbl, err := lake.CreateTable(ctx, "bench", name, nil)
	if err != nil {
		return err
	}
	const batches = 4
	id := int64(0)
	for b := range batches {
		n := commits / batches
		if b == batches-1 {
			n = commits - n*(batches-1)
		}
		for range n {
			if tbl, err = Append(ctx, tbl, id, rows, parts); err != nil {
				return err
			}
			id += int64(rows)
		}
		if b < batches-1 {
			if tbl, err = lake.Backdate(ctx, tbl, 3*24*time.Hour); err != nil {
				return err
			}
		}
	}
	data := DataDir(tbl)
	old := time.Now().Add(-10 * 24 * time.Hour)
	for i := range strays {
		if err := Touch(filepath.Join(data, fmt.Sprintf("stray-old-%04d.parquet", i)), old); err != nil {
			return err
		}
	}
	for i := range max(strays/4, 1) {
		if err := Touch(filepath.Join(data, fmt.Sprintf("stray-young-%04d.parquet", i)), time.Time{}); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "bench.%s: %d commits, %d snapshots, metadata %s\n", name, commits, len(tbl.Metadata().Snapshots()), tbl.MetadataLocation())
	return nil
}

// BuildWide makes bench.wide: files data-file entries committed with
// AddDataFiles in commits snapshots over 100 day partitions (the first half
// of the history backdated 10 days), for files that are never read: each
// exists on disk only as an empty file, so that the orphan listing agrees
// with the metadata.
func BuildWide(ctx context.Context, lake *Lake, files, commits int) error {
	tbl, err := lake.CreateTable(ctx, "bench", "wide", nil)
	if err != nil {
		return err
	}
	data := DataDir(tbl)
	const days = 100
	per := (files + commits - 1) / commits
	next := 0
	for c := range commits {
		var batch []SyntheticFile
		for ; next < files && len(batch) < per; next++ {
			day := next % days
			p := filepath.Join(data, fmt.Sprintf("event_day=%s", Day0.AddDate(0, 0, day).Format("2006-01-02")),
				fmt.Sprintf("%08d-synthetic.parquet", next))
			if err := Touch(p, time.Time{}); err != nil {
				return err
			}
			batch = append(batch, SyntheticFile{Path: p, Day: day, Size: 4 << 20, Rows: 10000})
		}
		if tbl, err = AddFiles(ctx, tbl, batch); err != nil {
			return err
		}
		if c == commits/2-1 {
			if tbl, err = lake.Backdate(ctx, tbl, 10*24*time.Hour); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench.wide: %d files in %d commits, metadata %s\n", files, commits, tbl.MetadataLocation())
	return nil
}

// FileName is a realistic data file name (writer id, task, a 16-hex id),
// the same for a given index on every run.
func FileName(i int) string {
	h := uint64(i)*0x9E3779B97F4A7C15 ^ 0xD1B54A32D192ED03
	return fmt.Sprintf("%08d-0-%016x.parquet", i, h)
}
