package compaction

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"
)

// Approved is one group a plan approved (diff.CompactGroup): its files as
// their manifests name them, its spec and partition as the plan rendered
// it, and their size in all.
type Approved struct {
	SpecID    int
	Partition string
	Files     []string
	Bytes     int64
}

// Skip is an approved group that is not rewritten because the table no
// longer matches it, with the reason.
type Skip struct {
	Index  int // into the approved groups
	Reason string
}

// Describe names the skipped group g and says why it is skipped.
func (s Skip) Describe(g Approved) string {
	where := g.Partition
	if where == "" {
		where = "unpartitioned"
	}
	return fmt.Sprintf("compaction group %d (spec %d, %s, %d files) skipped: %s", s.Index+1, g.SpecID, where, len(g.Files), s.Reason)
}

// Resolve checks the approved groups against tbl as it is now and returns
// the groups to rewrite: exactly each approved group's files, as scan
// tasks carrying the delete files that apply to them today. A group is
// skipped, with its reason, when one of its files is no longer live, is
// in another spec or partition than the plan said (render names a
// partition as the plan does), or the files' sizes changed. Files that
// arrived since the plan are in no approved group and are not touched.
//
// It is not a planner: it decides nothing about which files to take.
// A table whose snapshot summary counts at most DefaultSinglePassMaxFiles
// live files is planned in one pass of iceberg-go's scan planning, whose
// tasks are its live files: the manifests are read once. A larger one (or
// one without the count) is walked in one streaming pass over the current
// manifests to find the files, and their tasks come from scan planning per
// partition (as PlanPartitions does), so the table's every file is not
// held at once.
func Resolve(ctx context.Context, tbl *table.Table, approved []Approved, render func(specID int, part map[int]any) string) ([]Group, []Skip, error) {
	if len(approved) == 0 {
		return nil, nil, nil
	}
	owner := map[string]int{}
	for i, g := range approved {
		for _, f := range g.Files {
			if _, dup := owner[f]; dup {
				return nil, nil, fmt.Errorf("%w: file %s is in two approved groups", ErrRefused, f)
			}
			owner[f] = i
		}
	}
	live := make(map[string]liveFile, len(owner))
	if tbl.CurrentSnapshot() == nil {
		return nil, skipAll(approved, "the table has no current snapshot"), nil
	}
	onData := func(key string, df iceberg.DataFile) {
		if _, ok := owner[df.FilePath()]; ok {
			live[df.FilePath()] = liveFile{key: key, spec: int(df.SpecID()), part: df.Partition(), size: df.FileSizeBytes()}
		}
	}
	var (
		stats *planStats
		all   []table.FileScanTask // the whole table's tasks, when planned in one pass
		err   error
	)
	if n, ok := totalDataFiles(tbl.CurrentSnapshot()); ok && n <= DefaultSinglePassMaxFiles {
		// Small enough to plan in one pass: that pass's tasks are the live
		// files, and the manifests are read once, not walked first.
		if all, err = tbl.Scan().PlanFiles(ctx); err != nil {
			return nil, nil, fmt.Errorf("plan files: %w", err)
		}
		all = wholeFiles(all)
		for _, t := range all {
			onData(partKey(int(t.File.SpecID()), t.File.Partition()), t.File)
		}
	} else if stats, err = partitionStats(ctx, tbl, icecompaction.Config{}, nil, onData); err != nil {
		return nil, nil, err
	}
	var skips []Skip
	keep := make([]bool, len(approved))
	keys := make([]string, len(approved))
	for i, g := range approved {
		var why string
		keys[i], why = checkApproved(g, live, render)
		if why != "" {
			skips = append(skips, Skip{Index: i, Reason: why})
			continue
		}
		keep[i] = true
	}
	tasks, err := approvedTasks(ctx, tbl, stats, all, keys, keep)
	if err != nil {
		return nil, nil, err
	}
	var groups []Group
	for i, g := range approved {
		if !keep[i] {
			continue
		}
		out := Group{SpecID: g.SpecID, Partition: g.Partition, Tasks: make([]table.FileScanTask, 0, len(g.Files))}
		for _, f := range g.Files {
			t, ok := tasks[f]
			if !ok {
				// The manifests list it; scan planning must too.
				return nil, nil, fmt.Errorf("plan files: %s is live in the manifests but not in scan planning", f)
			}
			out.Tasks = append(out.Tasks, t)
		}
		groups = append(groups, out)
	}
	return groups, skips, nil
}

// liveFile is where an approved group's file is in the table now: its
// partition's key, spec, partition and size.
type liveFile struct {
	key  string
	spec int
	part map[int]any
	size int64
}

// checkApproved checks approved group g against the table's live files:
// its partition key, and why it cannot run as the plan approved it ("" when
// it can): a file gone, files no longer of one partition or of the planned
// one, other bytes than the plan's, or no files.
func checkApproved(g Approved, live map[string]liveFile, render func(specID int, part map[int]any) string) (key, why string) {
	var bytes int64
	gone := 0
	first := ""
	for _, f := range g.Files {
		l, ok := live[f]
		if !ok {
			if gone++; first == "" {
				first = f
			}
			continue
		}
		bytes += l.size
		switch {
		case why != "":
		case key != "" && l.key != key:
			why = fmt.Sprintf("its files are no longer of one partition (%s)", f)
		case l.spec != g.SpecID || render(l.spec, l.part) != g.Partition:
			why = fmt.Sprintf("the partition changed: %s is now in spec %d, partition %q", f, l.spec, render(l.spec, l.part))
		}
		key = l.key
	}
	switch {
	case gone > 0:
		why = fmt.Sprintf("%d of its %d files are no longer in the table (first: %s)", gone, len(g.Files), first)
	case why == "" && bytes != g.Bytes:
		why = fmt.Sprintf("its files hold %d bytes, the plan %d", bytes, g.Bytes)
	case why == "" && len(g.Files) == 0:
		why = "the plan names no files"
	}
	return key, why
}

// skipAll skips every approved group for the same reason.
func skipAll(approved []Approved, why string) []Skip {
	skips := make([]Skip, len(approved))
	for i := range approved {
		skips[i] = Skip{Index: i, Reason: why}
	}
	return skips
}

// approvedTasks plans the scan tasks of the kept groups' partitions (keys)
// and returns them by file path, whole files (wholeFiles): from all when
// Resolve planned the table in one pass (its summary counts at most
// DefaultSinglePassMaxFiles live files), else one partition at a time,
// each under a filter selecting it, with one full pass for the partitions
// no filter selects completely.
func approvedTasks(ctx context.Context, tbl *table.Table, stats *planStats, all []table.FileScanTask, keys []string, keep []bool) (map[string]table.FileScanTask, error) {
	want := map[string]bool{}
	for i, k := range keys {
		if keep[i] {
			want[k] = true
		}
	}
	byPath := map[string]table.FileScanTask{}
	add := func(tasks []table.FileScanTask) {
		for _, t := range wholeFiles(tasks) {
			if want[partKey(int(t.File.SpecID()), t.File.Partition())] {
				byPath[t.File.FilePath()] = t
			}
		}
	}
	if len(want) == 0 {
		return byPath, nil
	}
	if stats == nil {
		add(all)
		return byPath, nil
	}
	full := stats.files <= DefaultSinglePassMaxFiles
	if !full {
		for k := range want {
			tasks, ok, err := planPartition(ctx, tbl, PlanConfig{}, stats.parts[k])
			if err != nil {
				return nil, err
			}
			if !ok {
				full = true
				break
			}
			add(tasks)
		}
	}
	if full {
		all, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("plan files: %w", err)
		}
		add(all)
	}
	return byPath, nil
}
