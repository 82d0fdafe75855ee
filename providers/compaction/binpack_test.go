package compaction

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/table"
)

func TestBinpackPartitioned(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "events", partitioned: true})
	tbl = appendMany(t, tbl, 12, 4000, regions)
	before := rowStrings(t, tbl)
	beforeFiles := len(liveTasks(t, tbl))
	if beforeFiles != 48 {
		t.Fatalf("setup: want 48 files (12 commits x 4 partitions), got %d", beforeFiles)
	}

	const target = 64 << 10
	groups := groupsAll(t, tbl)
	if len(groups) != 4 {
		t.Fatalf("want 4 groups (one per partition), got %d", len(groups))
	}
	res, err := Run(context.Background(), tbl, groups, Options{Strategy: Binpack, TargetFileSize: target})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed() != 4 {
		t.Fatalf("want 4 groups committed, got %d", res.Committed())
	}
	after := res.Table
	requireSameRows(t, before, rowStrings(t, after))
	if op := after.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("want a replace snapshot, got %s", op)
	}

	// Sizes: within ±15% of the target except the last file per partition.
	perPartition := map[string][]int64{}
	for _, task := range liveTasks(t, after) {
		key := partitionName(after, task.File)
		perPartition[key] = append(perPartition[key], task.File.FileSizeBytes())
		if c := codecOf(t, after, task.File.FilePath()); c != "zstd" {
			t.Fatalf("%s written with %s, table says zstd", task.File.FilePath(), c)
		}
		if id := task.File.SortOrderID(); id != nil && *id != 0 {
			t.Fatalf("binpack output claims sort order %d", *id)
		}
	}
	for p, sizes := range perPartition {
		if len(sizes) < 2 {
			t.Fatalf("partition %s: want several output files at a %d target, got %v", p, target, sizes)
		}
		small := 0
		for _, s := range sizes {
			if float64(s) < 0.85*target || float64(s) > 1.15*target {
				small++
			}
		}
		if small > 1 {
			t.Fatalf("partition %s: %d files outside ±15%% of %d: %v", p, small, target, sizes)
		}
	}
}

// requireSizesNearTarget checks that every output file but one per
// partition is within ±15% of the target.
func requireSizesNearTarget(t testing.TB, tbl *table.Table, target int64) {
	t.Helper()
	perPartition := map[string][]int64{}
	for _, task := range liveTasks(t, tbl) {
		key := partitionName(tbl, task.File)
		perPartition[key] = append(perPartition[key], task.File.FileSizeBytes())
	}
	for p, sizes := range perPartition {
		off := 0
		for _, s := range sizes {
			if float64(s) < 0.85*float64(target) || float64(s) > 1.15*float64(target) {
				off++
			}
		}
		if off > 1 {
			t.Fatalf("partition %q: %d files outside ±15%% of %d: %v", p, off, target, sizes)
		}
	}
}
