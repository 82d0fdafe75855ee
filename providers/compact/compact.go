package compact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
	"github.com/icewright/icewright/providers/manifests"
)

// CompactSpec is what the compact action asks for at apply time: the
// approved action (its groups name the files to rewrite; its strategy,
// z-order columns and target size say how), and how to run it.
type CompactSpec struct {
	// StorageProps are the catalog block's properties, with which the
	// batched deletion of a failed rewrite's files opens its store
	// (objdel.ForIO: GCS and Azure credentials and endpoints).
	StorageProps map[string]string
	// Action is the approved compaction (diff.CompactAction). Its groups
	// that another engine rewrites (Engine set) are left to that engine.
	Action          *diff.CompactAction
	PartialProgress bool
	MaxConcurrent   int   // 0: one per CPU
	MemoryBudget    int64 // compaction.memory; 0: the engine's default
	// Catalog is the table's catalog: the commit goes through it, and before
	// removing what a failed commit left behind Compact checks there that
	// the commit did not land. Without it those files are kept.
	Catalog table.CatalogIO
	// Rebase lets a commit that lost a race with a concurrent append be
	// rebased by iceberg-go onto the new head; the rewrite's conflict
	// validation rejects it when a concurrent delete touched a replaced file
	// (providers/compaction). Without it the commit fails cleanly and apply
	// reloads, re-plans and retries, which a table with frequent appends can
	// starve.
	Rebase   bool
	Progress store.Progress
	// Memory, when set, keeps the process's Go soft memory limit sized for
	// this compaction (and the others running) while it runs.
	Memory *compaction.MemoryLimiter
	// ManifestTarget is the manifest size of the rewrite that assigns row
	// ids first (Action.AssignRowIDs: some files lack first_row_id).
	ManifestTarget int64
}

// Compact rewrites exactly the files of the approved groups with icewright'
// compaction engine (providers/compaction: bounded memory, sort and zorder,
// a live-row check before committing, staged files removed when a commit
// definitely failed and kept when its outcome is unknown) and commits a
// replace snapshot. Each group is checked against the table first
// (compaction.Resolve): one that no longer matches is skipped, and the
// result names it and why (store.Result.Skipped).
func Compact(ctx context.Context, tbl *table.Table, spec CompactSpec) (*table.Table, store.Result, error) {
	res, stop, err := kind.RewriteStart(tbl)
	if stop || err != nil {
		return tbl, res, err
	}
	res.FilesBefore, res.BytesBefore = kind.SummaryTotals(ctx, tbl)
	act := spec.Action
	if act == nil {
		res.NoOp, res.Note = true, "no compaction planned"
		return tbl, res, nil
	}
	tbl, groups, err := resolveGroups(ctx, tbl, spec, &res)
	if err != nil {
		return tbl, res, err
	}
	if len(groups) == 0 {
		res.NoOp = !res.Committed
		if res.Note == "" {
			res.Note = "no files need compaction"
		}
		res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
		return tbl, res, nil
	}
	return runGroups(ctx, tbl, groups, spec, res)
}

// resolveGroups checks the approved groups against tbl (compaction.Resolve)
// and returns those to rewrite; the others are res.Skipped, with a note.
// When some group's files of a format v3 table lack first_row_id and the
// plan says to assign them, the manifests are rewritten first (a commit of
// its own, in res) and the groups resolved again on the table it left,
// which is returned.
func resolveGroups(ctx context.Context, tbl *table.Table, spec CompactSpec, res *store.Result) (*table.Table, []compaction.Group, error) {
	act := spec.Action
	approved := approvedGroups(act)
	groups, skips, err := compaction.Resolve(ctx, tbl, approved, partitionRender(tbl.Metadata()))
	if err != nil {
		return tbl, nil, fmt.Errorf("check the planned groups: %w", err)
	}
	var notes []string
	if gaps := lineageGaps(tbl, groups); gaps > 0 && act.AssignRowIDs {
		next, mr, err := manifests.Rewrite(ctx, tbl, spec.ManifestTarget)
		if err != nil {
			return tbl, nil, fmt.Errorf("assign row ids by rewriting the manifests: %w", err)
		}
		if mr.Committed {
			tbl, res.Committed, res.MetadataLocation = next, true, next.MetadataLocation()
			res.Snapshots = mr.Snapshots // the rewrite's follow (own snapshots: expiry.KeepLive)
			notes = append(notes, fmt.Sprintf("row ids assigned to %d files first (manifests rewritten, %d into %d)", gaps, mr.FilesBefore, mr.FilesAfter))
			if groups, skips, err = compaction.Resolve(ctx, tbl, approved, partitionRender(tbl.Metadata())); err != nil {
				return tbl, nil, fmt.Errorf("check the planned groups: %w", err)
			}
		}
	}
	groups, skips = skipLineageGaps(tbl, approved, groups, skips)
	for _, sk := range skips {
		res.Skipped = append(res.Skipped, sk.Describe(approved[sk.Index]))
	}
	if len(skips) > 0 {
		notes = append(notes, fmt.Sprintf("%d of %s skipped: the table no longer matches them (first: %s)", len(skips), config.CountOf(len(approved), "planned group", "planned groups"), skips[0].Reason))
	}
	res.Note = strings.Join(notes, "; ")
	return tbl, groups, nil
}

// runGroups rewrites groups with the compaction engine and commits them,
// reporting the bytes written as each group finishes; res is the result so
// far (a row-id manifest rewrite may have committed).
func runGroups(ctx context.Context, tbl *table.Table, groups []compaction.Group, spec CompactSpec, res store.Result) (*table.Table, store.Result, error) {
	act := spec.Action
	var total int64
	for _, g := range groups {
		total += g.Bytes()
	}
	// The groups are rewritten concurrently, each reporting from its own
	// goroutine: the count and its report go under one lock, so that the
	// reports never go back.
	var (
		doneMu sync.Mutex
		done   int64
	)
	spec.Progress.Report(0, total, "bytes")
	// The commit goes through the table's own catalog unless spec.Catalog
	// enables rebasing; the recording IO sees every file the run writes, so
	// a definitely failed commit leaves nothing behind.
	verifyCat := spec.Catalog
	rtbl, rec := tbl, (*kind.RecordingIO)(nil)
	if verifyCat != nil {
		var err error
		if rtbl, rec, err = kind.Recording(ctx, tbl, verifyCat); err != nil {
			return tbl, res, err
		}
	}
	opts := compaction.Options{
		Strategy:            compaction.Strategy(strings.ToLower(act.Strategy)),
		ZOrderColumns:       act.ZOrderColumns,
		TargetFileSize:      act.TargetFileSize,
		PartialProgress:     spec.PartialProgress,
		MaxConcurrentGroups: spec.MaxConcurrent,
		MemoryBudget:        spec.MemoryBudget,
		SnapshotProps:       iceberg.Properties{"icewright.action": "compact"},
		// The engine commits through the catalog in every case, so that
		// its commit check sees each attempt as sent.
		Catalog:  verifyCat,
		NoReplay: !spec.Rebase,
		Progress: func(ev compaction.Event) {
			if ev.Phase == "written" && ev.Group >= 0 && ev.Group < len(groups) {
				doneMu.Lock()
				defer doneMu.Unlock()
				done += groups[ev.Group].Bytes()
				spec.Progress.Report(min(done, total), total, "bytes")
			}
		},
	}
	release, err := spec.Memory.Hold(rtbl, groups, opts)
	if err != nil {
		return tbl, res, fmt.Errorf("compaction memory limit: %w", err)
	}
	out, err := compaction.Run(ctx, rtbl, groups, opts)
	release()
	next := tbl
	if out != nil && out.Table != nil && out.Table != rtbl {
		next = out.Table
	}
	countRun(out, &res)
	res.MetadataLocation = next.MetadataLocation()
	res.FilesAfter, res.BytesAfter = kind.SummaryTotals(ctx, next)
	if err != nil {
		cerr := failedRun(ctx, tbl, spec, rec, out, &res, err)
		return next, res, fmt.Errorf("compaction: %w", cerr)
	}
	return next, res, nil
}

// countRun adds what the engine's run committed to res: its snapshots,
// rows in and out of the committed groups, and a note for the groups
// max_bytes_per_run left for later.
func countRun(out *compaction.Result, res *store.Result) {
	if out == nil {
		return
	}
	var skipped int
	res.Snapshots = append(res.Snapshots, out.Snapshots...)
	for _, g := range out.Groups {
		if g.Committed {
			res.Committed = true
			res.RowsBefore += g.InputRows
			res.RowsAfter += g.OutputRows
		}
		if g.Skipped != "" {
			skipped++
		}
	}
	if skipped > 0 {
		res.Note = strings.TrimPrefix(res.Note+"; "+fmt.Sprintf("%s left for a later run by max_bytes_per_run", config.CountOf(skipped, "group", "groups")), "; ")
	}
}

// failedRun classifies a failed run's error (kind.ClassifyErr) and, unless
// a group committed or the outcome is unknown, counts the data files the
// engine removed and removes what else the run wrote (rec); with an
// unknown outcome the written files are kept and named.
func failedRun(ctx context.Context, tbl *table.Table, spec CompactSpec, rec *kind.RecordingIO, out *compaction.Result, res *store.Result, err error) error {
	cerr := kind.ClassifyErr(err)
	if out != nil && !res.Committed {
		for _, g := range out.Groups {
			if errors.Is(cerr, store.ErrCommitUnknown) {
				res.StagedKept = append(res.StagedKept, g.OutputPaths...)
			} else {
				// The engine removed the data files it wrote.
				res.StagedRemoved += len(g.OutputPaths)
			}
		}
	}
	if rec != nil && !res.Committed && !errors.Is(cerr, store.ErrCommitUnknown) {
		n, lerr := kind.RemoveLeaked(context.WithoutCancel(ctx), spec.Catalog, tbl, rec.WriteFileIO, spec.StorageProps, kind.MinusPaths(rec.Written(), kind.OutputPaths(out)))
		res.StagedRemoved += n
		if lerr != nil {
			res.Note = strings.TrimPrefix(res.Note+"; "+lerr.Error(), "; ")
		}
	}
	return cerr
}

// approvedGroups are the action's groups that icewright rewrites (those
// with no Engine), as compaction.Resolve checks them.
func approvedGroups(act *diff.CompactAction) []compaction.Approved {
	var out []compaction.Approved
	for _, g := range act.Groups {
		if g.Engine == "" {
			out = append(out, compaction.Approved{SpecID: g.SpecID, Partition: g.Partition, Files: g.Files, Bytes: g.InputBytes})
		}
	}
	return out
}

// partitionRender names a partition as the plan's observation does
// (aggregator.key), so that a group's partition compares with the plan's.
func partitionRender(md table.Metadata) func(specID int, part map[int]any) string {
	renderers := map[int]*partitionRenderer{}
	return func(specID int, part map[int]any) string {
		r, ok := renderers[specID]
		if !ok {
			r = newPartitionRenderer(md.PartitionSpecByID(specID), md.CurrentSchema())
			renderers[specID] = r
		}
		return r.render(part)
	}
}

// lineageGaps counts the groups' files of a format v3 table that have no
// first_row_id: a rewrite cannot carry their rows' ids.
func lineageGaps(tbl *table.Table, groups []compaction.Group) int {
	if tbl.Metadata().Version() < 3 {
		return 0
	}
	n := 0
	for _, g := range groups {
		for _, t := range g.Tasks {
			if t.FirstRowID == nil {
				n++
			}
		}
	}
	return n
}

// skipLineageGaps moves to skips the resolved groups that still hold a file
// without first_row_id (the manifest rewrite that assigns them committed
// nothing): the rewrite would refuse them, and with them the whole run.
func skipLineageGaps(tbl *table.Table, approved []compaction.Approved, groups []compaction.Group, skips []compaction.Skip) ([]compaction.Group, []compaction.Skip) {
	if lineageGaps(tbl, groups) == 0 {
		return groups, skips
	}
	var kept []compaction.Group
	g := 0
	for i := range approved {
		if slices.ContainsFunc(skips, func(s compaction.Skip) bool { return s.Index == i }) {
			continue
		}
		if n := lineageGaps(tbl, groups[g:g+1]); n > 0 {
			skips = append(skips, compaction.Skip{Index: i, Reason: fmt.Sprintf("%d of its files have no first_row_id (format v3 row lineage) and rewriting the manifests assigned none", n)})
		} else {
			kept = append(kept, groups[g])
		}
		g++
	}
	slices.SortFunc(skips, func(a, b compaction.Skip) int { return a.Index - b.Index })
	return kept, skips
}

// Inputs reports which data files a compaction of tbl under sel
// would replace, for the plan's expiry estimate: files the compaction drops
// from the current snapshot are freed by an expiry of the older snapshots in
// the same plan. groups are the plan's compaction groups; a candidate file of
// a partition with a group counts as an input. now is the plan's clock (of
// sel.Where's current_date and now()).
//
// It is one streaming pass over the current manifests (the same selection
// Observe applies) into a sorted slice of paths, not compaction.PlanGroups:
// that builds a scan task per file and, above its single-pass limit, plans
// each partition with another manifest scan, which took 40-90 s and 800 MiB
// on a 100,000-file table. Leftover candidates that the packer would drop
// (bins below min_input_files) are counted too, so the figure is an
// estimate, as the plan says.
func Inputs(ctx context.Context, tbl *table.Table, sel diff.CompactionSelection, groups []diff.CompactGroup, now time.Time) (func(path string) bool, error) {
	in, err := candidatePaths(ctx, tbl, sel, groups, now)
	if err != nil {
		return nil, fmt.Errorf("compaction inputs: %w", err)
	}
	return func(p string) bool {
		_, found := slices.BinarySearch(in, store.NormPath(p))
		return found
	}, nil
}

// candidatePaths are the candidate data files of the groups' partitions in
// tbl's current snapshot (store.NormPath, sorted): one streaming pass over
// the current manifests with the selection Observe applies.
func candidatePaths(ctx context.Context, tbl *table.Table, sel diff.CompactionSelection, groups []diff.CompactGroup, now time.Time) ([]string, error) {
	cur := tbl.CurrentSnapshot()
	if cur == nil || len(groups) == 0 {
		return nil, nil
	}
	type partKey struct {
		spec int
		part string
	}
	want := map[partKey]bool{}
	for _, g := range groups {
		want[partKey{g.SpecID, g.Partition}] = true
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	var in []string
	_, err = aggregateSnapshot(ctx, fsys, tbl.Metadata(), cur, sel, now, func(path string, spec int, part string) {
		if want[partKey{spec, part}] {
			in = append(in, store.NormPath(path))
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(in)
	return in, nil
}

// PlanCompaction is the compaction a plan makes of tbl under the selection
// sel and strategy ("" for binpack) when no policy file names them: the
// table observed as a plan observes it (each candidate's path carried),
// then diff's planner, the one planner. now is the plan's clock (of
// sel.Where). It returns nil when there is nothing to compact, and an
// error naming the refusals when the plan refuses to. For tools and tests
// that compact a table directly (Compact runs the result).
func PlanCompaction(ctx context.Context, tbl *table.Table, sel diff.CompactionSelection, strategy string, now time.Time) (*diff.CompactAction, error) {
	pol := &config.Effective{Address: strings.Join(tbl.Identifier(), ".")}
	pol.TargetFileSize = config.Setting[int64]{Value: sel.Target, Set: sel.Target > 0}
	c := &pol.Compaction
	c.Declared = true
	c.Strategy = config.Setting[string]{Value: strategy, Set: strategy != ""}
	c.MinFileSize = config.Setting[int64]{Value: sel.Min, Set: sel.Min > 0}
	c.MaxFileSize = config.Setting[int64]{Value: sel.Max, Set: sel.Max > 0}
	c.MinInputFiles = config.Setting[int]{Value: sel.MinInputFiles, Set: sel.MinInputFiles > 0}
	c.DeleteFileThreshold = config.Setting[int]{Value: sel.DeleteFileThreshold, Set: sel.DeleteFileThreshold > 0}
	c.Where = config.Setting[string]{Value: sel.Where, Set: sel.Where != ""}
	st, err := ObserveTable(ctx, tbl, pol.Address, diff.SelectionFor(pol), now)
	if err != nil {
		return nil, err
	}
	tp := diff.PlanTable(pol, st, now)
	for _, a := range tp.Actions {
		if a.Type == diff.Compact {
			return a.Compact, nil
		}
	}
	if len(tp.Refusals) > 0 {
		var why []string
		for _, r := range tp.Refusals {
			why = append(why, r.Reason)
		}
		return nil, fmt.Errorf("%w: %s", store.ErrRefused, strings.Join(why, "; "))
	}
	return nil, nil
}
