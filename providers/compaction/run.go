package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/reach"
)

// Strategy is the policy's compaction.strategy.
type Strategy string

const (
	Binpack Strategy = "binpack"
	Sort    Strategy = "sort"
	ZOrder  Strategy = "zorder"
)

// Group is a set of data files of one partition of one spec, rewritten
// together. Tasks come from iceberg-go scan planning so that they carry the
// delete files (position, equality, deletion vectors) that apply to them.
type Group struct {
	SpecID    int
	Partition string // display key, "" for unpartitioned
	Tasks     []table.FileScanTask
	// Target, set by partition ageing (PlanAgeing), moves the group to a
	// coarser spec: its files may be of several partitions of SpecID, each
	// of which coarsens to Target's partition, where the outputs go.
	Target *reach.Target
}

// Bytes is the input data size of the group.
func (g Group) Bytes() int64 {
	var n int64
	for _, t := range g.Tasks {
		n += t.File.FileSizeBytes()
	}
	return n
}

// Options configure a run. Zero values take the documented defaults.
type Options struct {
	Strategy Strategy
	// SortOrder overrides the table's default sort order for Sort. Output
	// files record its id only when it is one of the table's sort orders.
	SortOrder *table.SortOrder
	// ZOrderColumns are the zorder columns (at least two).
	ZOrderColumns []string
	// TargetFileSize defaults to write.target-file-size-bytes, else
	// iceberg-go's default (table.WriteTargetFileSizeBytesDefault); apply
	// always passes the plan's.
	TargetFileSize int64
	// MemoryBudget bounds what the run buffers, all its groups at once
	// together; default 2×target + 16 MiB per concurrent group. A group
	// starts when its estimated need (groupNeed) fits beside the running
	// groups', or alone; it spills its sort past that need.
	MemoryBudget int64
	// TempDir holds spilled sort runs; default os.TempDir().
	TempDir string
	// PartialProgress commits each group on its own, so one failure does not
	// waste the others. Otherwise all groups commit in one snapshot.
	PartialProgress bool
	// MaxConcurrentGroups rewrites at most this many groups at once, as
	// the memory budget allows; 0: one per CPU (GOMAXPROCS).
	MaxConcurrentGroups int
	// MaxBytesPerRun stops taking groups once their input would exceed it
	// (the first group is always taken); 0 = no limit.
	MaxBytesPerRun int64
	// SnapshotProps are added to the replace snapshot's summary.
	SnapshotProps iceberg.Properties
	// Catalog is the table's catalog. With it, a commit that loses a race
	// with a concurrent writer is replayed by iceberg-go (with the rewrite's
	// conflict validation), a failed commit is known to have changed
	// nothing, and the commit check runs on each attempt as sent; without
	// it such a commit fails cleanly instead of retrying, the check runs on
	// the staged snapshot, and a rewrite that retires deletion vectors is
	// refused (countDVsAsIceberg needs the commit catalog).
	Catalog table.CatalogIO
	// NoReplay makes a commit through Catalog that loses a race fail
	// cleanly (table.ErrCommitFailed) instead of being replayed, whatever
	// the table's commit.retry.num-retries.
	NoReplay bool
	// Progress, when set, is called as groups advance. It must not block.
	Progress func(Event)

	// tamper, set only by this package's tests, changes each commit
	// attempt's updates before the commit check sees them.
	tamper commitTamper
	// addSpec, set by RunAgeing, is a partition spec the commit adds.
	addSpec *addedSpec
}

// Event reports progress of one group.
type Event struct {
	Group     int
	Partition string
	Phase     string // "started", "read", "written", "committed", "failed"
	Bytes     int64
	Rows      int64
}

// GroupResult is what happened to one group.
type GroupResult struct {
	SpecID        int
	Partition     string
	InputFiles    int
	InputBytes    int64
	InputRows     int64 // live rows read, deletes applied
	OutputFiles   int
	OutputBytes   int64
	OutputRows    int64
	SpilledRuns   int
	SpilledBytes  int64
	RemovedDelete int // delete files removed by the commit
	Committed     bool
	Skipped       string // why it was not attempted (budget)
	Err           error
	Duration      time.Duration
	// OutputPaths are the files written (committed, or removed on failure).
	OutputPaths []string
}

// Result of a run.
type Result struct {
	Table  *table.Table // latest table after the run's commits
	Groups []GroupResult
	// Snapshots are the snapshots the run committed, in commit order.
	Snapshots []int64
}

// Committed counts the groups committed.
func (r *Result) Committed() int {
	n := 0
	for _, g := range r.Groups {
		if g.Committed {
			n++
		}
	}
	return n
}

// ErrRefused marks a table or group the engine will not rewrite.
var ErrRefused = errors.New("compaction refused")

// ErrCommitUnknown marks a commit whose outcome is unknown (the catalog was
// reached and did not clearly refuse): its staged files were kept, since
// the table may now reference them.
var ErrCommitUnknown = errors.New("commit outcome unknown")

// Run rewrites the groups and commits replace snapshots. With
// PartialProgress it returns the per-group outcome and an error only for
// failures that concern the whole run; otherwise any failure aborts the run
// and removes every staged file.
func Run(ctx context.Context, tbl *table.Table, groups []Group, opts Options) (*Result, error) {
	res := &Result{Table: tbl}
	if tbl == nil {
		return res, errors.New("compaction: nil table")
	}
	if len(groups) == 0 {
		return res, nil
	}
	groups, cfg, err := checkRun(ctx, tbl, groups, opts)
	if err != nil {
		return res, err
	}
	selected := selectGroups(res, groups, opts)
	ctxRun, cancel := context.WithCancel(ctx)
	defer cancel()
	gr := &groupRun{tbl: tbl, groups: groups, opts: opts, cfg: cfg, res: res, cancel: cancel, ours: map[int64]bool{}}
	gr.rewriteAll(ctxRun, selected)

	if opts.PartialProgress {
		var errs error
		for i, g := range res.Groups {
			if g.Err != nil {
				errs = errors.Join(errs, fmt.Errorf("group %d (%s): %w", i, g.Partition, g.Err))
			}
		}
		return res, errs
	}
	return res, commitAtomic(ctx, res, gr.staged, gr.runErr, opts)
}

// checkRun resolves the options against the table and checks, before any
// file is written, that every group can be rewritten and committed: types
// the writer knows, a spec it can write, no file in two groups. It
// returns the groups with whole files.
func checkRun(ctx context.Context, tbl *table.Table, groups []Group, opts Options) ([]Group, runConfig, error) {
	if why := TypesProblem(tbl.Schema()); why != "" {
		return nil, runConfig{}, fmt.Errorf("%w: %s", ErrRefused, why)
	}
	cfg, err := resolve(tbl, opts)
	if err != nil {
		return nil, runConfig{}, err
	}
	// Read once per run, not once per group and pass: it may read the
	// metadata file (defaults.go).
	if cfg.exactDefaults, _, err = exactDefaults(ctx, tbl); err != nil {
		return nil, runConfig{}, fmt.Errorf("column defaults: %w", err)
	}
	unwritable := UnwritableSpecs(tbl)
	groups = slices.Clone(groups)
	inGroup := map[string]int{}
	for i, g := range groups {
		if why, ok := unwritable[g.SpecID]; ok {
			// Its commit would fail after the files are written.
			return nil, runConfig{}, fmt.Errorf("group %d (%s): %w: %s", i, g.Partition, ErrRefused, why)
		}
		groups[i].Tasks = wholeFiles(g.Tasks)
		for _, t := range groups[i].Tasks {
			if j, ok := inGroup[t.File.FilePath()]; ok && j != i {
				return nil, runConfig{}, fmt.Errorf("%w: file %s is in groups %d and %d: its rows would be written twice", ErrRefused, t.File.FilePath(), j, i)
			}
			inGroup[t.File.FilePath()] = i
		}
		if err := checkGroup(tbl, groups[i]); err != nil {
			return nil, runConfig{}, fmt.Errorf("group %d (%s): %w", i, g.Partition, err)
		}
	}
	return groups, cfg, nil
}

// selectGroups fills res.Groups and returns the groups this run rewrites:
// in order, up to max_bytes_per_run (at least one); each other is skipped
// with the reason.
func selectGroups(res *Result, groups []Group, opts Options) []int {
	res.Groups = make([]GroupResult, len(groups))
	var total int64
	selected := make([]int, 0, len(groups))
	for i, g := range groups {
		res.Groups[i] = GroupResult{SpecID: g.SpecID, Partition: g.Partition, InputFiles: len(g.Tasks), InputBytes: g.Bytes()}
		if opts.MaxBytesPerRun > 0 && len(selected) > 0 && total+g.Bytes() > opts.MaxBytesPerRun {
			res.Groups[i].Skipped = fmt.Sprintf("max_bytes_per_run %d reached", opts.MaxBytesPerRun)
			continue
		}
		total += g.Bytes()
		selected = append(selected, i)
	}
	return selected
}

// groupRun is the rewriting of a run's groups, concurrency of them at
// once within the memory budget.
type groupRun struct {
	tbl    *table.Table // the table as planned
	groups []Group
	opts   Options
	cfg    runConfig
	cancel context.CancelFunc // stops the other groups (atomic mode)

	mu     sync.Mutex // guards res.Table, staged, runErr and ours
	res    *Result
	staged []stagedGroup
	runErr error
	ours   map[int64]bool // snapshots committed by this run
}

// rewriteAll rewrites the selected groups, each once memory for it is
// free, and waits for them; none starts once ctx is done.
func (r *groupRun) rewriteAll(ctx context.Context, selected []int) {
	conc := r.cfg.concurrency
	perGroup := r.cfg
	perGroup.budget = r.cfg.budget / int64(conc)
	mem := newMemoryGate(r.cfg.budget)
	rowGroup := rowGroupBytes(r.tbl.Properties(), perGroup.target, perGroup.rowGroupCap())
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, conc)
	)
	for _, i := range selected {
		sem <- struct{}{}
		need := groupNeed(r.tbl.Schema(), r.groups[i], r.cfg.strategy, rowGroup)
		if ctx.Err() != nil || mem.acquire(ctx, need) != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			defer mem.release(need)
			gcfg := perGroup
			// The group may sort in memory what its files may inflate
			// to, within the run's budget: a group that fits never spills.
			gcfg.runBytes = max(perGroup.runBudget(), min(zorderInflation*r.groups[i].Bytes(), r.cfg.budget/3))
			r.rewrite(ctx, i, gcfg)
		}(i)
	}
	wg.Wait()
}

// rewrite rewrites group i, then stages it (atomic mode) or commits it
// alone (partial progress).
func (r *groupRun) rewrite(ctx context.Context, i int, gcfg runConfig) {
	start := time.Now()
	g := r.groups[i]
	r.mu.Lock()
	base := r.res.Table
	r.mu.Unlock()
	emit(r.opts.Progress, Event{Group: i, Partition: g.Partition, Phase: "started"})
	sg, err := rewriteGroup(ctx, base, i, g, gcfg, r.opts.Progress)
	gr := &r.res.Groups[i]
	if sg != nil {
		gr.InputRows, gr.OutputRows = sg.rowsIn, sg.rowsOut
		gr.OutputFiles, gr.OutputBytes = len(sg.files), sg.bytesOut
		gr.SpilledRuns, gr.SpilledBytes = sg.spilledRuns, sg.spilledBytes
		for _, f := range sg.files {
			gr.OutputPaths = append(gr.OutputPaths, f.FilePath())
		}
	}
	if err != nil {
		gr.Err = err
		gr.Duration = time.Since(start)
		emit(r.opts.Progress, Event{Group: i, Partition: g.Partition, Phase: "failed"})
		if !r.opts.PartialProgress {
			r.mu.Lock()
			r.runErr = errors.Join(r.runErr, fmt.Errorf("group %d (%s): %w", i, g.Partition, err))
			r.mu.Unlock()
			r.cancel()
		}
		return
	}
	if !r.opts.PartialProgress {
		r.mu.Lock()
		r.staged = append(r.staged, *sg)
		r.mu.Unlock()
		gr.Duration = time.Since(start)
		return
	}
	r.commitOne(ctx, i, sg, start)
}

// commitOne commits one group's rewrite on its own (partial progress).
func (r *groupRun) commitOne(ctx context.Context, i int, sg *stagedGroup, start time.Time) {
	g, gr := r.groups[i], &r.res.Groups[i]
	r.mu.Lock()
	// The group's rows reflect the deletes of the planning snapshot,
	// so conflict validation must start there: a delete committed by
	// someone else after it, even one our previous commit rebased
	// onto, would otherwise be resurrected. Only when every snapshot
	// since planning is one of our own replaces (which add no
	// deletes) may the commit start from the latest table.
	commitBase := r.tbl
	if onlyOurSnapshotsSince(r.res.Table, r.tbl, r.ours) {
		commitBase = r.res.Table
	}
	next, removed, err := commitGroups(ctx, commitBase, []stagedGroup{*sg}, r.opts)
	if next != nil {
		r.res.Table = next
		if cs := next.CurrentSnapshot(); cs != nil {
			r.ours[cs.SnapshotID] = true
			r.res.Snapshots = append(r.res.Snapshots, cs.SnapshotID)
		}
	}
	r.mu.Unlock()
	gr.Duration = time.Since(start)
	if err != nil {
		gr.Err = err
		emit(r.opts.Progress, Event{Group: i, Partition: g.Partition, Phase: "failed"})
		return
	}
	gr.Committed = true
	gr.RemovedDelete = removed
	emit(r.opts.Progress, Event{Group: i, Partition: g.Partition, Phase: "committed", Bytes: sg.bytesOut, Rows: sg.rowsOut})
}

// commitAtomic ends an atomic run: after any failure (or an interrupt)
// every staged file goes and nothing is committed; else every staged
// group is committed in one snapshot.
func commitAtomic(ctx context.Context, res *Result, staged []stagedGroup, runErr error, opts Options) error {
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	if runErr != nil {
		// Atomic mode: nothing was committed, so every staged file goes.
		for _, sg := range staged {
			runErr = errors.Join(runErr, sg.remove(ctx))
		}
		return runErr
	}
	if len(staged) == 0 {
		return nil
	}
	next, removed, err := commitGroups(ctx, res.Table, staged, opts)
	if next != nil {
		res.Table = next
		if cs := next.CurrentSnapshot(); cs != nil {
			res.Snapshots = append(res.Snapshots, cs.SnapshotID)
		}
	}
	if err != nil {
		for i := range res.Groups {
			res.Groups[i].Err = err
		}
		return err
	}
	for _, sg := range staged {
		res.Groups[sg.index].Committed = true
	}
	if len(staged) > 0 {
		res.Groups[staged[0].index].RemovedDelete = removed
	}
	emit(opts.Progress, Event{Group: -1, Phase: "committed"})
	return nil
}

// onlyOurSnapshotsSince reports whether every snapshot between planned's
// current snapshot and latest's is in ours.
func onlyOurSnapshotsSince(latest, planned *table.Table, ours map[int64]bool) bool {
	stop := planned.CurrentSnapshot()
	cur := latest.CurrentSnapshot()
	if stop == nil || cur == nil {
		return false
	}
	for cur != nil && cur.SnapshotID != stop.SnapshotID {
		if !ours[cur.SnapshotID] || cur.ParentSnapshotID == nil {
			return false
		}
		cur = latest.SnapshotByID(*cur.ParentSnapshotID)
	}
	return cur != nil
}

func emit(p func(Event), e Event) {
	if p != nil {
		p(e)
	}
}

// runConfig is Options resolved against the table.
type runConfig struct {
	strategy    Strategy
	target      int64
	budget      int64 // the run's, or with it resolved, one group's share
	concurrency int   // groups at once at most
	runBytes    int64 // sort run budget, when set above budget/3
	tempDir     string
	order       table.SortOrder
	sortOrderID int
	zcols       []string
	// exactDefaults are the metadata text of large int/long defaults
	// (defaults.go), by field id.
	exactDefaults map[int]json.Number
}

func resolve(tbl *table.Table, o Options) (runConfig, error) {
	c := runConfig{strategy: o.Strategy, tempDir: o.TempDir, zcols: o.ZOrderColumns}
	if c.strategy == "" {
		c.strategy = Binpack
	}
	c.target = o.TargetFileSize
	if c.target <= 0 {
		c.target = propInt64(tbl.Properties(), table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	}
	c.concurrency = o.MaxConcurrentGroups
	if c.concurrency <= 0 {
		// Read, not set: the CPUs this process may use.
		c.concurrency = runtime.GOMAXPROCS(0)
	}
	c.budget = o.MemoryBudget
	if c.budget <= 0 {
		c.budget = diff.DefaultCompactionMemory(c.target, c.concurrency)
	}
	switch c.strategy {
	case Binpack:
	case Sort:
		order := tbl.SortOrder()
		if o.SortOrder != nil {
			order = *o.SortOrder
		}
		if order.IsUnsorted() || order.Len() == 0 {
			return c, fmt.Errorf("%w: strategy sort needs a sort order and the table has none", ErrRefused)
		}
		// Before a file is read or written; the plan refuses the same
		// (diff's check of the columns' SortTransforms).
		if err := CheckSortOrder(order, tbl.Schema()); err != nil {
			return c, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		c.order = order
		// Record the id only when the table's metadata has this very order;
		// an id pointing at a different order would make engines trust a
		// sortedness that does not hold.
		c.sortOrderID, _ = orderIDIn(tbl.Metadata(), order)
	case ZOrder:
		if len(o.ZOrderColumns) < 2 {
			return c, fmt.Errorf("%w: strategy zorder needs at least 2 zorder_columns", ErrRefused)
		}
		if err := CheckZOrderColumns(o.ZOrderColumns, tbl.Schema()); err != nil {
			return c, fmt.Errorf("%w: %w", ErrRefused, err)
		}
	default:
		return c, fmt.Errorf("%w: unknown strategy %q", ErrRefused, c.strategy)
	}
	return c, nil
}

func sameFields(a, b table.SortOrder) bool {
	for i := range a.Len() {
		if !a.Field(i).Equals(b.Field(i)) {
			return false
		}
	}
	return true
}

// checkGroup enforces that a group is one partition of one spec.
func checkGroup(tbl *table.Table, g Group) error {
	if len(g.Tasks) == 0 {
		return errors.New("empty group")
	}
	if tbl.Metadata().PartitionSpecByID(g.SpecID) == nil {
		return fmt.Errorf("spec %d is not in the table metadata", g.SpecID)
	}
	first := g.Tasks[0].File.Partition()
	var target *iceberg.PartitionSpec
	if g.Target != nil {
		if target = tbl.Metadata().PartitionSpecByID(g.Target.SpecID); target == nil {
			return fmt.Errorf("target spec %d is not in the table metadata", g.Target.SpecID)
		}
	}
	src := tbl.Metadata().PartitionSpecByID(g.SpecID)
	for _, t := range g.Tasks {
		if int(t.File.SpecID()) != g.SpecID {
			return fmt.Errorf("%w: file %s has spec %d, group has spec %d: files of different specs are never mixed",
				ErrRefused, t.File.FilePath(), t.File.SpecID(), g.SpecID)
		}
		samePart := func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
		if target != nil {
			// Files of several partitions, each coarsening to the target.
			got, err := reach.Coarsen(*src, *target, t.File.Partition())
			if err != nil || !maps.EqualFunc(got, g.Target.Partition, samePart) {
				return fmt.Errorf("%w: file %s does not coarsen to the group's target partition %v of spec %d (%v, %v)",
					ErrRefused, t.File.FilePath(), g.Target.Partition, g.Target.SpecID, got, err)
			}
		} else if !maps.EqualFunc(first, t.File.Partition(), samePart) {
			return fmt.Errorf("%w: file %s is in another partition than the group's first file", ErrRefused, t.File.FilePath())
		}
		if tbl.Metadata().Version() >= 3 && t.FirstRowID == nil {
			// Without a first_row_id the rows' ids cannot be carried over;
			// iceberg-go would silently drop lineage for the whole group.
			return fmt.Errorf("%w: format v3 file %s has no first_row_id: rewriting it would not preserve row lineage (_row_id, _last_updated_sequence_number)",
				ErrRefused, t.File.FilePath())
		}
		if t.Start != 0 || (t.Length != 0 && t.Length != t.File.FileSizeBytes()) {
			return fmt.Errorf("%w: task for %s is a split (offset %d length %d): a rewrite must read whole files",
				ErrRefused, t.File.FilePath(), t.Start, t.Length)
		}
	}
	return nil
}

// stagedGroup is a rewritten group not yet committed.
type stagedGroup struct {
	index        int
	group        Group
	files        []iceberg.DataFile
	rowsIn       int64
	rowsOut      int64
	bytesOut     int64
	spilledRuns  int
	spilledBytes int64
	tbl          *table.Table
}

func (s *stagedGroup) remove(ctx context.Context) error {
	if len(s.files) == 0 {
		return nil
	}
	fs, err := s.tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("remove staged files: %w", err)
	}
	paths := make([]string, len(s.files))
	for i, f := range s.files {
		paths[i] = f.FilePath()
	}
	return removeFiles(fs, paths)
}

// rewriteGroup reads, (sorts,) writes and verifies one group. On error
// every file it wrote is removed.
func rewriteGroup(ctx context.Context, tbl *table.Table, index int, g Group, cfg runConfig, progress func(Event)) (*stagedGroup, error) {
	specID, partition := g.SpecID, g.Tasks[0].File.Partition()
	if g.Target != nil {
		specID, partition = g.Target.SpecID, g.Target.Partition
	}
	spec := tbl.Metadata().PartitionSpecByID(specID)
	if spec == nil {
		return nil, fmt.Errorf("spec %d is not in the table metadata", specID)
	}
	var inRecords, inBytes int64
	for _, t := range g.Tasks {
		inRecords += t.File.Count()
		inBytes += t.File.FileSizeBytes()
	}
	bpr := 0.0
	if inRecords > 0 {
		bpr = float64(inBytes) / float64(inRecords)
	}
	w, err := newRollingWriter(ctx, writerConfig{
		tbl:          tbl,
		spec:         *spec,
		partition:    partition,
		target:       cfg.target,
		sortOrderID:  sortIDFor(cfg),
		bytesPerRow:  bpr,
		rowGroupCap:  cfg.rowGroupCap(),
		groupOrdinal: index,
		lineage:      tbl.Metadata().Version() >= 3,
	})
	if err != nil {
		return nil, err
	}
	sg := &stagedGroup{index: index, group: g, tbl: tbl}
	fail := func(err error) (*stagedGroup, error) {
		if rerr := w.abort(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		sg.files = nil
		return sg, err
	}

	var rowsIn int64
	switch cfg.strategy {
	case Binpack:
		err = readGroup(ctx, tbl, g, cfg.exactDefaults, func(rec arrow.RecordBatch) error {
			rowsIn += rec.NumRows()
			return w.write(rec)
		})
	case Sort, ZOrder:
		keyer, kerr := groupKeyer(ctx, tbl, g, cfg, w)
		if kerr != nil {
			return fail(kerr)
		}
		rowsIn, err = sortAndWrite(ctx, tbl, g, cfg, keyer, w, sg)
	}
	if err != nil {
		return fail(fmt.Errorf("rewrite: %w", err))
	}
	emit(progress, Event{Group: index, Partition: g.Partition, Phase: "read", Rows: rowsIn, Bytes: inBytes})
	files, err := w.finish()
	if err != nil {
		return fail(err)
	}
	sg.files = files
	sg.rowsIn = rowsIn
	for _, f := range files {
		sg.rowsOut += f.Count()
		sg.bytesOut += f.FileSizeBytes()
	}
	// The one check that matters: every live row read is in the outputs,
	// counted from the Parquet footers, and no more rows than the inputs held.
	if sg.rowsOut != rowsIn || rowsIn > inRecords {
		return fail(fmt.Errorf("row check failed: read %d live rows (of %d records in the inputs), wrote %d; nothing committed",
			rowsIn, inRecords, sg.rowsOut))
	}
	emit(progress, Event{Group: index, Partition: g.Partition, Phase: "written", Rows: sg.rowsOut, Bytes: sg.bytesOut})
	return sg, nil
}

// groupKeyer is the sort key of a sort or z-order rewrite of g. A z-order
// group that may spill is read once first to sample the whole group, so
// that every run ranks by the same mapping; a group that fits one run is
// ranked exactly from its rows, in one read.
func groupKeyer(ctx context.Context, tbl *table.Table, g Group, cfg runConfig, w *rollingWriter) (rowKeyer, error) {
	as := w.arrowSchema
	if cfg.strategy == Sort {
		return newSortKeyEncoder(cfg.order, tbl.Schema(), as)
	}
	zk, err := newZOrderKeyer(cfg.zcols, tbl.Schema(), as)
	if err == nil && zorderMaySpill(g, cfg) {
		err = readGroup(ctx, tbl, g, cfg.exactDefaults, func(rec arrow.RecordBatch) error {
			c, err := w.conform(rec)
			if err != nil {
				return err
			}
			defer c.Release()
			zk.observe(c)
			return nil
		})
		zk.seal()
	}
	return zk, err
}

// sortAndWrite reads g through an external sorter by keyer into w and
// returns the rows read; the rows sorted must be as many.
func sortAndWrite(ctx context.Context, tbl *table.Table, g Group, cfg runConfig, keyer rowKeyer, w *rollingWriter, sg *stagedGroup) (int64, error) {
	var rowsIn int64
	// The sorter sees batches already conformed to the writer's schema
	// so that its run files and the writer agree on types.
	s := newExternalSorter(ctx, keyer, w.arrowSchema, cfg.runBudget(), cfg.tempDir)
	err := readGroup(ctx, tbl, g, cfg.exactDefaults, func(rec arrow.RecordBatch) error {
		rowsIn += rec.NumRows()
		c, err := w.conform(rec)
		if err != nil {
			return err
		}
		defer c.Release()
		return s.add(c)
	})
	var rowsSorted int64
	if err == nil {
		err = s.finish(func(rec arrow.RecordBatch) error {
			rowsSorted += rec.NumRows()
			return w.write(rec)
		})
	} else {
		s.cleanup()
	}
	sg.spilledRuns, sg.spilledBytes = s.spilledRuns, s.spilledBytes
	if err == nil && rowsSorted != rowsIn {
		err = fmt.Errorf("sort emitted %d rows for %d input rows", rowsSorted, rowsIn)
	}
	return rowsIn, err
}

// zorderInflation is how much larger than its Parquet files a group is as
// Arrow arrays (diff.ZOrderInflation: the memory rule the plan shares).
const zorderInflation = diff.ZOrderInflation

func zorderMaySpill(g Group, c runConfig) bool {
	return zorderInflation*g.Bytes() > c.runBudget()
}

// groupNeed estimates the memory a group's rewrite holds at its peak: the
// writer's buffered row group (2.5x, as ProcessMemoryLimit counts it), the
// read side and the encoders, and, to sort, the group's rows as Arrow
// batches (arrowBytes) and its keys and their radix sort (keyBytesPerRow
// a row). The scheduler starts groups while their needs fit the run's
// budget together, and ProcessMemoryLimit sizes the collector's limit
// from the needs of the groups that may run at once.
func groupNeed(sc *iceberg.Schema, g Group, strategy Strategy, rowGroup int64) int64 {
	if strategy == Binpack {
		return diff.GroupMemoryNeed(g.Bytes(), rowGroup, false, 0, 0)
	}
	var rows int64
	for _, t := range g.Tasks {
		rows += t.File.Count()
	}
	return diff.GroupMemoryNeed(g.Bytes(), rowGroup, true, arrowBytes(sc, g), rows)
}

// arrowBytes estimates the size of a group's rows as Arrow arrays from its
// files' metadata: fixed-width columns exactly from the row count, binary
// ones from their offsets and the longer of their bounds (a value may be
// longer than a truncated bound, so not below 3x the column's Parquet
// size either), and what is neither (nested columns, or files without
// column sizes) at zorderInflation times its Parquet size.
func arrowBytes(sc *iceberg.Schema, g Group) int64 {
	var est int64
	for _, t := range g.Tasks {
		f := t.File
		rows := f.Count()
		sizes, lower, upper := f.ColumnSizes(), f.LowerBoundValues(), f.UpperBoundValues()
		if len(sizes) == 0 {
			est += zorderInflation * f.FileSizeBytes()
			continue
		}
		rest := f.FileSizeBytes()
		for _, fld := range sc.Fields() {
			if w, ok := fixedWidth(fld.Type); ok {
				est += rows*w + rows/8
				rest -= sizes[fld.ID]
				continue
			}
			switch fld.Type.(type) {
			case iceberg.StringType, iceberg.BinaryType:
				long := int64(max(len(lower[fld.ID]), len(upper[fld.ID])))
				est += rows*(4+long) + rows/8
				est += max(0, 3*sizes[fld.ID]-rows*long)
				rest -= sizes[fld.ID]
			}
		}
		est += zorderInflation * max(rest, 0)
	}
	return est
}

// fixedWidth is the Arrow bytes per value of a fixed-width Iceberg type
// (a boolean counts a byte).
func fixedWidth(t iceberg.Type) (int64, bool) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return 1, true
	case iceberg.Int32Type, iceberg.Float32Type, iceberg.DateType:
		return 4, true
	case iceberg.Int64Type, iceberg.Float64Type, iceberg.TimeType, iceberg.TimestampType,
		iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return 8, true
	case iceberg.DecimalType, iceberg.UUIDType:
		return 16, true
	case iceberg.FixedType:
		return int64(t.Len()), true
	}
	return 0, false
}

func sortIDFor(c runConfig) int {
	if c.strategy == Sort {
		return c.sortOrderID
	}
	return table.UnsortedSortOrderID
}

// readGroup streams the group's live rows through iceberg-go's scanner,
// which applies position deletes, deletion vectors and equality deletes.
// Two workers overlap decoding with our encoding; each holds at most one
// file's batches, which keeps the read side bounded by the input file size.
// Files that lack identity-partition columns are read apart from the others
// and get those columns from the partition value (constants.go).
func readGroup(ctx context.Context, tbl *table.Table, g Group, exact map[int]json.Number, fn func(arrow.RecordBatch) error) error {
	subsets, err := splitByConstants(ctx, tbl, g)
	if err != nil {
		return fmt.Errorf("read group: %w", err)
	}
	for _, sub := range subsets {
		if err := readTasks(ctx, tbl, sub, exact, fn); err != nil {
			return err
		}
	}
	return nil
}

func readTasks(ctx context.Context, tbl *table.Table, sub constantSubset, exact map[int]json.Number, fn func(arrow.RecordBatch) error) error {
	opts := []table.ScanOption{table.WithMaxConcurrency(min(2, len(sub.tasks)))}
	// pqarrow reserves every column for a whole read batch (131,072 rows
	// by default) and zeroes it: on files of a few thousand rows, ten
	// times the values read, which the collector then sweeps and a sort
	// run copies out (compactBatch). A batch of the largest file's rows
	// reads each file whole and reserves what it holds.
	var most int64
	for _, t := range sub.tasks {
		most = max(most, t.File.Count())
	}
	if most > 0 && most < 1<<17 {
		opts = append(opts, table.WithArrowBatchSize(int(most)))
	}
	if tbl.Metadata().Version() >= 3 {
		// Read each row's _row_id and _last_updated_sequence_number (stored,
		// or derived from first_row_id and the data sequence number) so the
		// outputs keep them: a compaction changes no row.
		opts = append(opts, table.WithRowLineage())
	}
	// A task planned under a `where` filter carries a residual that
	// ReadTasks would apply, dropping the rows of a replaced file that do
	// not match: rows lost. A rewrite reads whole files, so residuals go.
	tasks := make([]table.FileScanTask, len(sub.tasks))
	for i, t := range sub.tasks {
		t.Residual = nil
		tasks[i] = t
	}
	rt, err := readerTable(tbl, sub, exact)
	if err != nil {
		return fmt.Errorf("read group: %w", err)
	}
	scan := rt.Scan(opts...)
	_, it, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return fmt.Errorf("read group: %w", err)
	}
	for rec, err := range it {
		if err != nil {
			return fmt.Errorf("read group: %w", err)
		}
		if len(sub.cols) > 0 {
			filled, ferr := fillConstants(rec, sub.cols, memory.DefaultAllocator)
			rec.Release()
			if ferr != nil {
				return fmt.Errorf("read group: %w", ferr)
			}
			rec = filled
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// commitGroups commits one replace snapshot for the staged groups through
// iceberg-go's RewriteFiles: it suppresses the append-conflict check
// (concurrent appends are fine for a rewrite, and iceberg-go rebases onto
// them), and rejects the commit when a concurrent delete targets a file
// being replaced. Dead delete files are removed in the same snapshot, and so
// are dangling ones, which match no live file (danglingDeletes).
// A commit that definitely failed removes the staged files; one whose
// outcome is unknown keeps them (they may now be referenced).
func commitGroups(ctx context.Context, tbl *table.Table, staged []stagedGroup, opts Options) (*table.Table, int, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, errors.Join(fmt.Errorf("open table io: %w", err), removeAll(ctx, staged))
	}
	tbl, cc := withCommitCatalog(tbl, opts.Catalog, fs, opts.NoReplay, opts.tamper)
	if opts.addSpec != nil {
		if cc == nil {
			return nil, 0, errors.Join(errors.New("a commit that adds a partition spec needs the catalog"), removeAll(ctx, staged))
		}
		cc.addSpec = opts.addSpec
	}
	rewritten := map[string]struct{}{}
	var tasks []table.FileScanTask
	for _, sg := range staged {
		for _, t := range sg.group.Tasks {
			rewritten[t.File.FilePath()] = struct{}{}
			tasks = append(tasks, t)
		}
	}
	dead, err := deadDeletes(ctx, fs, tbl, rewritten)
	if err != nil {
		return nil, 0, errors.Join(err, removeAll(ctx, staged))
	}
	dvs := table.CollectSafeDeletionVectors(tasks)

	txn := tbl.NewTransaction()
	change, removed, err := stageRewrite(ctx, txn, staged, [][]iceberg.DataFile{dead.pos, dead.eq, dvs, dead.dangling}, opts)
	if err != nil {
		return nil, 0, errors.Join(fmt.Errorf("stage replace snapshot: %w", err), removeAll(ctx, staged))
	}
	if cc != nil {
		// Checked on each attempt, as sent (commitCatalog).
		cc.change = change
	} else if dvSizeOvercount(change.RetiredDeletes) != 0 {
		// Only the commit catalog can correct iceberg-go's summary.
		return nil, 0, errors.Join(fmt.Errorf("%w: the rewrite retires deletion vectors, whose summary size only a commit through Options.Catalog counts as Iceberg does (nothing committed, staged files removed)", reach.ErrCommitCheck), removeAll(ctx, staged))
	} else if err := checkStaged(ctx, fs, tbl, txn, change); err != nil {
		return nil, 0, errors.Join(fmt.Errorf("commit replace snapshot (not committed, staged files removed): %w", err), removeAll(ctx, staged))
	}
	next, err := sendReplace(ctx, txn, cc, staged)
	if next == nil {
		removed = 0
	}
	return next, removed, err
}

// retiredDeletes are delete files a rewrite retires besides deletion
// vectors.
type retiredDeletes struct {
	pos, eq  []iceberg.DataFile // dead: every target is rewritten here
	dangling []iceberg.DataFile // match no live file (danglingDeletes)
}

// deadDeletes are the delete files the rewrite of the files in rewritten
// retires: none when the current snapshot cannot have deletes.
func deadDeletes(ctx context.Context, fs icebergio.IO, tbl *table.Table, rewritten map[string]struct{}) (retiredDeletes, error) {
	snap := tbl.CurrentSnapshot()
	if !mayHaveDeletes(snap) {
		return retiredDeletes{}, nil
	}
	// A position delete file may cover files outside this commit; only
	// those whose every target is rewritten here are dead.
	deadPos, err := table.CollectDeadPositionDeletes(ctx, fs, snap, rewritten)
	if err != nil {
		return retiredDeletes{}, fmt.Errorf("collect dead position deletes: %w", err)
	}
	deadEq, err := icecompaction.CollectDeadEqualityDeletesWithSpecs(ctx, fs, tbl.Metadata(), snap, rewritten)
	if err != nil {
		return retiredDeletes{}, fmt.Errorf("collect dead equality deletes: %w", err)
	}
	d, err := danglingDeletes(ctx, fs, tbl.Metadata(), snap, snap)
	if err != nil {
		return retiredDeletes{}, fmt.Errorf("collect dangling deletes: %w", err)
	}
	return retiredDeletes{pos: deadPos, eq: deadEq, dangling: d.Files}, nil
}

// stageRewrite stages the replace snapshot in txn: each group's inputs
// out and outputs in, and each retired delete file out once. It
// returns the change for the commit check and the delete files removed.
func stageRewrite(ctx context.Context, txn *table.Transaction, staged []stagedGroup, retired [][]iceberg.DataFile, opts Options) (reach.Change, int, error) {
	rw := txn.NewRewrite(opts.SnapshotProps)
	for _, sg := range staged {
		for _, t := range sg.group.Tasks {
			rw.DeleteFile(t.File)
		}
		for _, f := range sg.files {
			rw.AddFile(f)
		}
	}
	change := reach.Change{}
	for _, sg := range staged {
		g := reach.RewriteGroup{Outputs: sg.files, RowsRead: sg.rowsIn, Target: sg.group.Target}
		for _, t := range sg.group.Tasks {
			g.Inputs = append(g.Inputs, t.File.FilePath())
		}
		change.Groups = append(change.Groups, g)
	}
	seen := map[string]struct{}{}
	removed := 0
	for _, list := range retired {
		for _, df := range list {
			// A deletion vector is told apart by the data file it
			// references (reach.FileKey): keyed by its Puffin file alone,
			// all but the first DV of a Puffin file would stay, dangling
			// once their data files are rewritten.
			key := reach.FileKey(df)
			if _, ok := seen[key]; ok {
				continue
			}
			seen[key] = struct{}{}
			rw.DeleteFile(df)
			change.RetiredDeletes = append(change.RetiredDeletes, df)
			removed++
		}
	}
	err := rw.Commit(ctx)
	return change, removed, err
}

// sendReplace sends the staged commit to the catalog. A commit that
// definitely failed removes the staged files; one whose outcome is
// unknown keeps them (they may now be referenced).
func sendReplace(ctx context.Context, txn *table.Transaction, cc *commitCatalog, staged []stagedGroup) (*table.Table, error) {
	// The commit keeps ctx's cancellation (an interrupt before the catalog
	// answers leaves the outcome to the checks below) and gets the run's
	// bound, so a catalog that stops answering cannot hang it.
	commitCtx, cancel := bound.Call(ctx)
	next, err := txn.Commit(commitCtx)
	cancel()
	if err != nil {
		if next != nil {
			// The catalog accepted the commit; a post-commit hook failed.
			return next, fmt.Errorf("post-commit: %w", err)
		}
		notCommitted := definitelyNotCommittedWithout(err)
		if cc != nil {
			notCommitted = cc.definitelyNotCommitted()
		}
		if notCommitted {
			return nil, errors.Join(fmt.Errorf("commit replace snapshot (not committed, staged files removed): %w", err), removeAll(ctx, staged))
		}
		return nil, fmt.Errorf("commit replace snapshot: %w (staged files kept): %w", ErrCommitUnknown, err)
	}
	return next, nil
}

// checkStaged is the commit check without a catalog to intercept the
// commit: the staged snapshot against the table's current one. Without a
// catalog iceberg-go sends that very snapshot (no catalog wrapper turns a
// conflict into a replay).
func checkStaged(ctx context.Context, fs icebergio.IO, tbl *table.Table, txn *table.Transaction, change reach.Change) error {
	st, err := txn.StagedTable()
	if err != nil {
		return fmt.Errorf("%w: stage the snapshot: %w", reach.ErrCommitCheck, err)
	}
	cur, next := tbl.CurrentSnapshot(), st.CurrentSnapshot()
	if cur == nil || next == nil {
		return fmt.Errorf("%w: no snapshot to check", reach.ErrCommitCheck)
	}
	if err := reach.CheckSnapshots(ctx, fs, st.Metadata(), cur.SnapshotID, next.SnapshotID, change); err != nil {
		if rerr := removeUnsentStaged(fs, tbl.Metadata(), st.Metadata()); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

func removeAll(ctx context.Context, staged []stagedGroup) error {
	var errs error
	for i := range staged {
		errs = errors.Join(errs, staged[i].remove(ctx))
	}
	return errs
}

// mayHaveDeletes is false only when the snapshot summary says the table has
// no delete files, which spares two walks over every manifest.
func mayHaveDeletes(snap *table.Snapshot) bool {
	if snap == nil || snap.Summary == nil {
		return true
	}
	v, ok := snap.Summary.Properties["total-delete-files"]
	return !ok || v != "0"
}

// ProcessMemoryLimit is the Go soft memory limit a process running only
// this engine on tbl should set (runtime/debug.SetMemoryLimit) so that its
// peak RSS follows what the engine holds rather than the collector's slack:
// without a limit Go lets garbage grow to the size of the live heap before
// collecting. With the planned groups, it is what the groups that may run
// at once need together (groupNeed, as the scheduler admits them: the
// largest, as many as run at once, within the budget) with an eighth
// more for the collector to work in (groupNeed is itself on the generous
// side: the collector has about 1.4x the live heap), plus a baseline for the catalog, planning
// and runtime. Without groups, or when that is more, it is the bound from
// the options alone: the writer's buffered row group (about 2.5x its size),
// the sort runs (about 2.5x the run budget, sort and zorder only), the
// read side and the zstd encoders' windows, twice, never above the budget.
// It is a value, not a setting: only main may change process-wide state.
func ProcessMemoryLimit(tbl *table.Table, groups []Group, o Options) (int64, error) {
	cfg, err := resolve(tbl, o)
	if err != nil {
		return 0, err
	}
	rowGroup := rowGroupBytes(tbl.Properties(), cfg.target, cfg.rowGroupCap())
	need := 3*rowGroup + 24<<20
	if cfg.strategy != Binpack {
		need += cfg.runBudget() * 5 / 2
	}
	conc := int64(cfg.concurrency)
	// Twice the need leaves the collector room: at exactly the need it
	// runs almost continuously (measured: +60% CPU on the 2M-row
	// benchmark), at twice it costs about what iceberg-go spends.
	limit := min(2*need*conc, cfg.budget)
	if len(groups) > 0 {
		needs := make([]int64, len(groups))
		for i, g := range groups {
			needs[i] = groupNeed(tbl.Schema(), g, cfg.strategy, rowGroup)
		}
		// The gate admits groups together only within the budget; a
		// group above it runs alone.
		together := diff.MemoryTogether(needs, cfg.concurrency, cfg.budget)
		// An eighth over the needs is room enough where a sorted run, a
		// live set measured to the byte, is most of them. A binpack group
		// is all stream (reader, writer, encoders), whose garbage churns:
		// at 9/8 of its need the collector ran a quarter of the time
		// (10M-row binpack: 371 collections against 156, +30% CPU; at 3/2
		// of it, +10%), so it keeps twice its need, as without groups. The
		// price: about 40 MiB more peak RSS on the 1M-row binpack.
		headroom := together * 9 / 8
		if cfg.strategy == Binpack {
			headroom = 2 * together
		}
		limit = min(limit, headroom)
	}
	return limit + processBaseline, nil
}

// rowGroupCap is the memory cap on one writer's row group.
func (c runConfig) rowGroupCap() int64 { return max(c.budget/4, 1<<20) }

// runBudget is the arrow bytes a sort run may hold before it is spilled.
func (c runConfig) runBudget() int64 { return max(c.budget/3, c.runBytes) }
