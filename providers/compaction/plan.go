package compaction

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"

	"github.com/icewright/icewright/providers/internal/reach"
)

// PlanConfig selects the files to rewrite.
type PlanConfig struct {
	// Selection is iceberg-go's per-file rule and packer configuration
	// (target, min/max size, min input files, delete thresholds); diff
	// mirrors the same rules to estimate the plan.
	Selection icecompaction.Config
	// Where restricts planning to the partitions that may hold matching
	// rows (policy `where`, decided by WhereFilter from each file's
	// partition, as the plan decides it). Files are still rewritten whole.
	Where iceberg.BooleanExpression
	// PerPartition, when set, merges all of a partition's selected files
	// into one group (so a sort covers the partition), instead of iceberg-go's
	// bins of at most one target size.
	PerPartition bool
	// SinglePassMaxFiles: up to this many live data files, the table is
	// planned in one scan-planning pass (every task held at once, but each
	// manifest read once); above it, one partition at a time (each
	// partition's planning reads the manifests that may hold it). 0 means
	// DefaultSinglePassMaxFiles; negative always plans per partition.
	SinglePassMaxFiles int
	// Stale, when set, makes files written under another sort order
	// candidates whatever their size; their partitions are one group each
	// (StaleSort).
	Stale *StaleSort
}

// DefaultSinglePassMaxFiles keeps single-pass planning to a few tens of
// MiB of tasks.
const DefaultSinglePassMaxFiles = 20000

// PlanGroups plans every group; see PlanPartitions.
func PlanGroups(ctx context.Context, tbl *table.Table, cfg PlanConfig) ([]Group, error) {
	var groups []Group
	for g, err := range PlanPartitions(ctx, tbl, cfg) {
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// PlanPartitions yields compaction groups partition by partition, so the
// groups are exactly those iceberg-go's planner (compaction.Config) and
// diff's estimate choose, without holding a task per file of the table.
//
// iceberg-go's Analyze plans every file of the table in one slice. Here a
// first pass streams the manifests, one entry at a time, and keeps only a
// counter per partition; a partition is then planned by iceberg-go's own
// scan planning (which matches position deletes, deletion vectors and
// equality deletes to data files) under a filter that selects exactly that
// partition. A partition that cannot be selected by a row filter (bucket or
// truncate fields) falls back to one full planning pass, as does a
// partition whose filtered planning finds a different number of files than
// the manifests list: completeness is checked, not assumed.
func PlanPartitions(ctx context.Context, tbl *table.Table, cfg PlanConfig) iter.Seq2[Group, error] {
	return func(yield func(Group, error) bool) {
		limit := cfg.SinglePassMaxFiles
		if limit == 0 {
			limit = DefaultSinglePassMaxFiles
		}
		// emit groups one partition's (or the table's) tasks and yields the
		// groups; false when the caller stopped or an error was yielded.
		emit := func(tasks []table.FileScanTask) bool {
			groups, err := groupTasks(tbl, cfg, tasks)
			if err != nil {
				yield(Group{}, err)
				return false
			}
			for _, g := range groups {
				if !yield(g, nil) {
					return false
				}
			}
			return true
		}
		var where *WhereFilter
		if cfg.Where != nil {
			var err error
			if where, err = NewWhereFilter(tbl.Metadata(), cfg.Where); err != nil {
				yield(Group{}, fmt.Errorf("where: %w", err))
				return
			}
		}
		if n, ok := totalDataFiles(tbl.CurrentSnapshot()); ok && limit > 0 && n <= int64(limit) {
			// Small table: the summary says so, skip the counting pass.
			emitWholeTable(ctx, tbl, where, emit, yield)
			return
		}
		stats, err := partitionStats(ctx, tbl, cfg.Selection, cfg.Stale, nil)
		if err != nil {
			yield(Group{}, err)
			return
		}
		singlePass := limit > 0 && stats.files <= limit
		var fallback []string // partitions left to the full pass
		for _, ps := range stats.order {
			p := stats.parts[ps]
			if ok, err := where.mayMatch(p.specID, p.partition); err != nil || !ok {
				if err != nil {
					yield(Group{}, err)
					return
				}
				continue // outside the policy's where
			}
			if p.sizeCandidates < int(cfg.Selection.MinInputFiles) && p.deletes == 0 && p.stale == 0 && !stats.globalDeletes {
				continue // iceberg-go's planner would skip it too
			}
			if singlePass {
				fallback = append(fallback, ps)
				continue
			}
			tasks, ok, err := planPartition(ctx, tbl, cfg, p)
			if err != nil {
				yield(Group{}, err)
				return
			}
			if !ok {
				fallback = append(fallback, ps)
				continue
			}
			if !emit(tasks) {
				return
			}
		}
		if len(fallback) == 0 {
			return
		}
		emitFullPass(ctx, tbl, fallback, emit, yield)
	}
}

// emitWholeTable plans the whole table in one scan and emits the tasks
// the policy's where keeps, at once.
func emitWholeTable(ctx context.Context, tbl *table.Table, where *WhereFilter, emit func([]table.FileScanTask) bool, yield func(Group, error) bool) {
	all, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		yield(Group{}, fmt.Errorf("plan files: %w", err))
		return
	}
	if all, err = where.keep(all); err != nil {
		yield(Group{}, err)
		return
	}
	emit(all)
}

// emitFullPass plans the whole table in one scan and emits the tasks of
// each partition in parts (partKey), in order.
func emitFullPass(ctx context.Context, tbl *table.Table, parts []string, emit func([]table.FileScanTask) bool, yield func(Group, error) bool) {
	all, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		yield(Group{}, fmt.Errorf("plan files: %w", err))
		return
	}
	byPart := map[string][]table.FileScanTask{}
	for _, t := range all {
		k := partKey(int(t.File.SpecID()), t.File.Partition())
		byPart[k] = append(byPart[k], t)
	}
	all = nil
	for _, ps := range parts {
		if !emit(byPart[ps]) {
			return
		}
	}
}

// groupTasks runs iceberg-go's planner on one partition's tasks.
func groupTasks(tbl *table.Table, cfg PlanConfig, tasks []table.FileScanTask) ([]Group, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	// Scan planning splits files larger than read.split.target-size into
	// row-group ranges; a rewrite reads and replaces whole files, and
	// iceberg-go's packer would weigh and bin each split on its own.
	tasks = wholeFiles(tasks)
	if cfg.Stale != nil {
		if out, ok, err := staleGroups(tbl, cfg, tasks); ok || err != nil {
			return out, err
		}
	}
	plan, err := cfg.Selection.PlanCompaction(tasks)
	if err != nil {
		return nil, fmt.Errorf("plan compaction: %w", err)
	}
	var out []Group
	index := map[string]int{}
	for _, pg := range plan.Groups {
		if len(pg.Tasks) == 0 {
			continue
		}
		f := pg.Tasks[0].File
		g := Group{SpecID: int(f.SpecID()), Partition: partitionName(tbl, f), Tasks: slices.Clip(pg.Tasks)}
		key := partKey(g.SpecID, f.Partition())
		if i, ok := index[key]; ok && cfg.PerPartition {
			out[i].Tasks = append(out[i].Tasks, g.Tasks...)
			continue
		}
		index[key] = len(out)
		out = append(out, g)
	}
	return out, nil
}

type partStat struct {
	specID         int
	partition      map[int]any
	files          int
	sizeCandidates int
	deletes        int
	stale          int // files StaleSort picks
}

type planStats struct {
	parts         map[string]*partStat
	order         []string
	globalDeletes bool // a delete file of an unpartitioned spec applies everywhere
	files         int  // live data files
}

// partitionStats counts, per (spec, partition) of the current snapshot,
// live data files, size candidates, stale files and delete files, through
// the one manifest walk (reach.Walk, whose aggregate sees each live entry
// of the snapshot). onData, when set, also sees each live data file.
func partitionStats(ctx context.Context, tbl *table.Table, sel icecompaction.Config, stale *StaleSort, onData func(key string, df iceberg.DataFile)) (*planStats, error) {
	st := &planStats{parts: map[string]*partStat{}}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return st, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	agg := &statsAggregate{md: tbl.Metadata(), st: st, sel: sel, stale: stale, onData: onData}
	w := reach.Spec{Meta: tbl.Metadata(), FS: fs, Snapshots: []int64{snap.SnapshotID}, Aggregate: agg, AggregateSnapshot: snap.SnapshotID}
	if err := reach.Walk(ctx, w); err != nil {
		return nil, err
	}
	return st, nil
}

// statsAggregate is partitionStats' reach.Aggregate.
type statsAggregate struct {
	md     table.Metadata
	st     *planStats
	sel    icecompaction.Config
	stale  *StaleSort
	onData func(key string, df iceberg.DataFile)
}

func (a *statsAggregate) part(df iceberg.DataFile) (string, *partStat) {
	key := partKey(int(df.SpecID()), df.Partition())
	p, ok := a.st.parts[key]
	if !ok {
		p = &partStat{specID: int(df.SpecID()), partition: df.Partition()}
		a.st.parts[key] = p
		a.st.order = append(a.st.order, key)
	}
	return key, p
}

func (a *statsAggregate) ManifestList(int64)            {}
func (a *statsAggregate) Manifest(iceberg.ManifestFile) {}
func (a *statsAggregate) SealDeletes()                  {}

func (a *statsAggregate) DeleteEntry(e iceberg.ManifestEntry) {
	df := e.DataFile()
	if spec := a.md.PartitionSpecByID(int(df.SpecID())); spec == nil || spec.IsUnpartitioned() {
		a.st.globalDeletes = true
	}
	_, p := a.part(df)
	p.deletes++
}

func (a *statsAggregate) DataEntry(_ string, e iceberg.ManifestEntry) (reach.Group, bool) {
	df := e.DataFile()
	key, p := a.part(df)
	p.files++
	a.st.files++
	if a.onData != nil {
		a.onData(key, df)
	}
	if a.stale.Stale(df) {
		p.stale++
	}
	if size := df.FileSizeBytes(); size < a.sel.MinFileSizeBytes && size <= a.sel.MaxFileSizeBytes {
		p.sizeCandidates++
	}
	return reach.Group{}, false
}

// planPartition plans one partition through iceberg-go under a filter that
// selects it. ok is false when no such filter exists or when the result
// does not hold every live data file of the partition.
func planPartition(ctx context.Context, tbl *table.Table, cfg PlanConfig, p *partStat) ([]table.FileScanTask, bool, error) {
	spec := tbl.Metadata().PartitionSpecByID(p.specID)
	if spec == nil {
		return nil, false, fmt.Errorf("spec %d is not in the table metadata", p.specID)
	}
	filter, ok := partitionFilter(tbl.Schema(), *spec, p.partition)
	if !ok {
		return nil, false, nil
	}
	tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("plan partition %s: %w", partitionName(tbl, dataFileStub{p.specID, p.partition}), err)
	}
	key := partKey(p.specID, p.partition)
	kept := tasks[:0]
	for _, t := range tasks {
		if partKey(int(t.File.SpecID()), t.File.Partition()) == key {
			kept = append(kept, t)
		}
	}
	if len(kept) != p.files {
		return nil, false, nil
	}
	return kept, true, nil
}

// partKey identifies a (spec, partition) in both passes.
func partKey(specID int, part map[int]any) string {
	ids := make([]int, 0, len(part))
	for id := range part {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d", specID)
	for _, id := range ids {
		fmt.Fprintf(&sb, "|%d=%T:%v", id, part[id], part[id])
	}
	return sb.String()
}

// partitionFilter is a row filter whose matching rows are exactly those of
// the partition, for identity and time transforms; false otherwise.
func partitionFilter(sc *iceberg.Schema, spec iceberg.PartitionSpec, part map[int]any) (iceberg.BooleanExpression, bool) {
	var exprs []iceberg.BooleanExpression
	for _, f := range spec.Fields() {
		name, ok := sc.FindColumnName(f.SourceID())
		if !ok {
			return nil, false
		}
		src, _ := sc.FindFieldByID(f.SourceID())
		ref := iceberg.Reference(name)
		v := part[f.FieldID]
		switch f.Transform.(type) {
		case iceberg.VoidTransform:
			continue
		case iceberg.IdentityTransform:
			if v == nil {
				exprs = append(exprs, iceberg.IsNull(ref))
				continue
			}
			e, ok := equalTo(ref, v)
			if !ok {
				return nil, false
			}
			exprs = append(exprs, e)
		case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform, iceberg.HourTransform:
			if v == nil {
				exprs = append(exprs, iceberg.IsNull(ref))
				continue
			}
			e, ok := timeRange(ref, f.Transform, src.Type, v)
			if !ok {
				return nil, false
			}
			exprs = append(exprs, e)
		default:
			return nil, false
		}
	}
	switch len(exprs) {
	case 0:
		return iceberg.AlwaysTrue{}, true
	case 1:
		return exprs[0], true
	}
	return iceberg.NewAnd(exprs[0], exprs[1], exprs[2:]...), true
}

func equalTo(ref iceberg.UnboundTerm, v any) (iceberg.BooleanExpression, bool) {
	switch x := v.(type) {
	case bool:
		return iceberg.EqualTo(ref, x), true
	case int32:
		return iceberg.EqualTo(ref, x), true
	case int64:
		return iceberg.EqualTo(ref, x), true
	case float32:
		return iceberg.EqualTo(ref, x), true
	case float64:
		return iceberg.EqualTo(ref, x), true
	case string:
		return iceberg.EqualTo(ref, x), true
	case []byte:
		return iceberg.EqualTo(ref, x), true
	case iceberg.Date:
		return iceberg.EqualTo(ref, x), true
	case iceberg.Time:
		return iceberg.EqualTo(ref, x), true
	case iceberg.Timestamp:
		return iceberg.EqualTo(ref, x), true
	case iceberg.Decimal:
		return iceberg.EqualTo(ref, x), true
	case uuid.UUID:
		return iceberg.EqualTo(ref, x), true
	}
	return nil, false
}

// timeRange turns year/month/day/hour partition ordinal v into
// lo <= source < hi on the source column (date or microsecond timestamp).
func timeRange(ref iceberg.UnboundTerm, tr iceberg.Transform, src iceberg.Type, v any) (iceberg.BooleanExpression, bool) {
	n, ok := reach.TimeOrdinal(v)
	if !ok {
		return nil, false
	}
	lo, ok := reach.WindowStart(tr, n)
	if !ok {
		return nil, false
	}
	hi, _ := reach.WindowStart(tr, n+1)
	switch src.(type) {
	case iceberg.DateType:
		if _, hour := tr.(iceberg.HourTransform); hour {
			return nil, false
		}
		d := func(t time.Time) iceberg.Date { return iceberg.Date(t.Unix() / 86400) }
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, d(lo)), iceberg.LessThan(ref, d(hi))), true
	case iceberg.TimestampType, iceberg.TimestampTzType:
		ts := func(t time.Time) iceberg.Timestamp { return iceberg.Timestamp(t.UnixMicro()) }
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, ts(lo)), iceberg.LessThan(ref, ts(hi))), true
	}
	return nil, false
}

// dataFileStub carries a spec id and partition for partitionName.
type dataFileStub struct {
	spec int
	part map[int]any
}

// partitionName renders a partition like a Hive path ("region=eu/day=…"),
// "" when unpartitioned.
func partitionName(tbl *table.Table, f interface {
	SpecID() int32
	Partition() map[int]any
},
) string {
	spec := tbl.Metadata().PartitionSpecByID(int(f.SpecID()))
	if spec == nil || spec.IsUnpartitioned() {
		return ""
	}
	return specPath(*spec, f.Partition(), tbl.Schema())
}

func (d dataFileStub) SpecID() int32          { return int32(d.spec) }
func (d dataFileStub) Partition() map[int]any { return d.part }

// totalDataFiles reads total-data-files from the snapshot summary.
func totalDataFiles(snap *table.Snapshot) (int64, bool) {
	if snap == nil || snap.Summary == nil {
		return 0, false
	}
	v, ok := snap.Summary.Properties["total-data-files"]
	if !ok {
		return 0, false
	}
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil {
		return 0, false
	}
	return n, true
}

// wholeFiles merges the split tasks of a file back into one task covering
// the whole file (the first split carries the file's delete files).
func wholeFiles(tasks []table.FileScanTask) []table.FileScanTask {
	seen := make(map[string]int, len(tasks))
	out := tasks[:0:0]
	for _, t := range tasks {
		p := t.File.FilePath()
		if _, ok := seen[p]; ok {
			continue
		}
		seen[p] = len(out)
		t.Start, t.Length = 0, t.File.FileSizeBytes()
		out = append(out, t)
	}
	return out
}

// staleGroups plans tasks when some are files StaleSort picks (ok false
// otherwise): partition by partition in the order the tasks list them, a
// partition with a stale file is one group of its candidates and stale
// files, whatever min_input_files; the others are planned by iceberg-go
// as groupTasks plans them.
func staleGroups(tbl *table.Table, cfg PlanConfig, tasks []table.FileScanTask) ([]Group, bool, error) {
	var order []string
	byPart := map[string][]table.FileScanTask{}
	stale := map[string]bool{}
	for _, t := range tasks {
		k := partKey(int(t.File.SpecID()), t.File.Partition())
		if _, ok := byPart[k]; !ok {
			order = append(order, k)
		}
		byPart[k] = append(byPart[k], t)
		stale[k] = stale[k] || cfg.Stale.Stale(t.File)
	}
	if len(stale) == 0 || !slices.ContainsFunc(order, func(k string) bool { return stale[k] }) {
		return nil, false, nil
	}
	plain := cfg
	plain.Stale = nil
	var out []Group
	for _, k := range order {
		part := byPart[k]
		if !stale[k] {
			groups, err := groupTasks(tbl, plain, part)
			if err != nil {
				return nil, true, err
			}
			out = append(out, groups...)
			continue
		}
		// iceberg-go's own candidates: with min_input_files 1 no bin is
		// dropped, so its groups hold every file its rule selects.
		sel := cfg.Selection
		sel.MinInputFiles = 1
		plan, err := sel.PlanCompaction(part)
		if err != nil {
			return nil, true, fmt.Errorf("plan compaction: %w", err)
		}
		picked := map[string]bool{}
		for _, g := range plan.Groups {
			for _, t := range g.Tasks {
				picked[t.File.FilePath()] = true
			}
		}
		var group []table.FileScanTask
		for _, t := range part {
			if picked[t.File.FilePath()] || cfg.Stale.Stale(t.File) {
				group = append(group, t)
			}
		}
		f := group[0].File
		out = append(out, Group{SpecID: int(f.SpecID()), Partition: partitionName(tbl, f), Tasks: group})
	}
	return out, true, nil
}
