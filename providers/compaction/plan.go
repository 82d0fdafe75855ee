package compaction

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"
)

// PlanConfig selects the files to rewrite.
type PlanConfig struct {
	// Selection is iceberg-go's per-file rule and packer configuration
	// (target, min/max size, min input files, delete thresholds); diff
	// mirrors the same rules to estimate the plan.
	Selection icecompaction.Config
	// Where restricts planning to files that may hold matching rows
	// (policy `where`). Files are still rewritten whole.
	Where iceberg.BooleanExpression
	// PerPartition, when set, merges all of a partition's selected files
	// into one group (so a sort covers the partition), instead of iceberg-go's
	// bins of at most one target size.
	PerPartition bool
}

// PlanGroups plans compaction groups: per (spec, partition), candidate files
// bin-packed by iceberg-go's planner, so the groups are exactly those diff
// estimated. Groups never mix specs or partitions.
//
// Known limit: iceberg-go's scan planning materialises every file task of
// the (filtered) snapshot before grouping; Run itself streams.
func PlanGroups(ctx context.Context, tbl *table.Table, cfg PlanConfig) ([]Group, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	var opts []table.ScanOption
	if cfg.Where != nil {
		opts = append(opts, table.WithRowFilter(cfg.Where))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan files: %w", err)
	}
	plan, err := cfg.Selection.PlanCompaction(tasks)
	if err != nil {
		return nil, fmt.Errorf("plan compaction: %w", err)
	}
	var groups []Group
	index := map[string]int{}
	for _, pg := range plan.Groups {
		if len(pg.Tasks) == 0 {
			continue
		}
		f := pg.Tasks[0].File
		g := Group{SpecID: int(f.SpecID()), Partition: partitionName(tbl, f), Tasks: pg.Tasks}
		key := fmt.Sprintf("%d/%s", g.SpecID, g.Partition)
		if i, ok := index[key]; ok && cfg.PerPartition {
			groups[i].Tasks = append(groups[i].Tasks, g.Tasks...)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, g)
	}
	for i := range groups {
		groups[i].Tasks = slices.Clip(groups[i].Tasks)
	}
	return groups, nil
}

// partitionName renders a file's partition like a Hive path
// ("region=eu/day=2026-11-01"), "" when unpartitioned.
func partitionName(tbl *table.Table, f iceberg.DataFile) string {
	spec := tbl.Metadata().PartitionSpecByID(int(f.SpecID()))
	if spec == nil || spec.IsUnpartitioned() {
		return ""
	}
	var rec partitionRecord
	for _, pf := range spec.Fields() {
		rec = append(rec, f.Partition()[pf.FieldID])
	}
	return spec.PartitionToPath(rec, tbl.Schema())
}
