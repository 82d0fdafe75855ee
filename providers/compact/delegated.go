package compact

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/engine"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// delegatedRun is what runDelegated needs besides the call.
type delegatedRun struct {
	engine engine.Engine
	cat    table.CatalogIO
	sel    diff.CompactionSelection
	now    time.Time
}

// runDelegated has another engine compact one partition and checks the
// table before calling it done (docs/design.md §5.4, docs/engines.md):
// exactly one new replace snapshot on main since the head it started
// from (a concurrent writer's snapshots in between are kept and fine),
// its change passing the commit check every rewrite passes
// (reach.CheckSnapshots), the partition's planned files gone from the live
// set, and the partition's rows, counted and fingerprinted by the engine,
// the same in that snapshot as in its parent. The engine commits on its
// own, so a check that fails comes after the commit: the action fails
// loudly, naming the snapshot, which icewright cannot undo.
//
// The result's one Partitions entry says what became of the partition, its
// failure included (without the partition's name, which the entry has).
func runDelegated(ctx context.Context, tbl *table.Table, r delegatedRun, call diff.EngineCall) (*table.Table, store.Result, error) {
	prefix := fmt.Sprintf("compaction of partition %s by %s: ", partitionName(call.Partition), call.Engine)
	next, res, err := delegate(ctx, tbl, r, call, prefix)
	o := diff.PartitionOutcome{Partition: call.Partition, Engine: call.Engine, Status: diff.PartitionDone, Detail: res.Note, Rows: res.RowsAfter}
	if len(res.Snapshots) > 0 {
		o.Snapshot = res.Snapshots[0]
	}
	switch {
	case err != nil:
		o.Status, o.Detail, o.Error = diff.PartitionFailed, "", strings.TrimPrefix(err.Error(), prefix)
	case res.NoOp:
		o.Status = diff.PartitionSkipped
	}
	res.Partitions, res.Note = []diff.PartitionOutcome{o}, ""
	return next, res, err
}

// partitionName is a plan's partition for people: "" is the table's one.
func partitionName(p string) string {
	if p == "" {
		return "(unpartitioned)"
	}
	return p
}

// delegate is runDelegated's work; its errors start with prefix.
func delegate(ctx context.Context, tbl *table.Table, r delegatedRun, call diff.EngineCall, prefix string) (*table.Table, store.Result, error) {
	res := store.Result{MetadataLocation: tbl.MetadataLocation()}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s%s", prefix, fmt.Sprintf(format, args...))
	}
	cur, err := r.cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return tbl, res, fail("reload the table: %v", err)
	}
	head := cur.CurrentSnapshot()
	if head == nil {
		res.NoOp, res.Note = true, "table has no snapshot"
		return cur, res, nil
	}
	planned, err := candidatePaths(ctx, cur, r.sel, []diff.CompactGroup{{SpecID: call.SpecID, Partition: call.Partition}}, r.now)
	if err != nil {
		return cur, res, fail("its files now: %v", err)
	}
	if len(planned) == 0 {
		// Nothing left to rewrite (another writer compacted it): the
		// engine would commit nothing.
		res.NoOp, res.Note = true, fmt.Sprintf("no candidate files now, nothing for %s to do", call.Engine)
		return cur, res, nil
	}
	said, err := r.engine.Run(ctx, call)
	if err != nil {
		after, lerr := r.cat.LoadTable(ctx, tbl.Identifier())
		if lerr == nil && after.MetadataLocation() != cur.MetadataLocation() {
			if s, _ := newReplaces(after, head.SnapshotID); len(s) > 0 {
				return after, res, fail("%v; and the table has new replace snapshot %d: check it before the next apply", err, s[0].SnapshotID)
			}
		}
		return cur, res, fail("%v", err)
	}
	next, err := r.cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return cur, res, fail("%s reported %s, and reloading the table failed: %v (check the table before the next apply)", call.Engine, said, err)
	}
	res.MetadataLocation = next.MetadataLocation()
	replaces, err := newReplaces(next, head.SnapshotID)
	if err != nil {
		return next, res, fail("%s reported %s: %v", call.Engine, said, err)
	}
	switch len(replaces) {
	case 0:
		return next, res, fail("%s reported %s but committed no replace snapshot on main: the %d planned files are still live", call.Engine, said, len(planned))
	case 1:
	default:
		ids := make([]string, len(replaces))
		for i, s := range replaces {
			ids[i] = fmt.Sprint(s.SnapshotID)
		}
		res.Committed = true
		return next, res, fail("%s committed %d replace snapshots (%s) where one was planned; icewright cannot undo an engine's commit: check them", call.Engine, len(replaces), strings.Join(ids, ", "))
	}
	snap := replaces[0]
	// Committed, but not among the apply's verified snapshots until the
	// check passes: expiry may delete what those replaced (expiry.KeepLive).
	res.Committed = true
	undo := fmt.Sprintf("%s committed snapshot %d, which icewright cannot undo (roll back to its parent with the engine if the table is wrong)", call.Engine, snap.SnapshotID)
	if err := checkDelegated(ctx, next, snap, planned); err != nil {
		return next, res, fail("%s; its check failed: %v", undo, err)
	}
	before, err := r.engine.Fingerprint(ctx, call, *snap.ParentSnapshotID)
	if err != nil {
		return next, res, fail("%s; the rows could not be compared: %v", undo, err)
	}
	after, err := r.engine.Fingerprint(ctx, call, snap.SnapshotID)
	if err != nil {
		return next, res, fail("%s; the rows could not be compared: %v", undo, err)
	}
	res.RowsBefore, res.RowsAfter = before.Rows, after.Rows
	if before != after {
		return next, res, fail("%s; the partition's rows differ: %d rows (digest %s) before, %d (digest %s) after", undo, before.Rows, before.Digest, after.Rows, after.Digest)
	}
	res.Snapshots = []int64{snap.SnapshotID}
	res.Note = fmt.Sprintf("%s; snapshot %d checked, %d rows unchanged", said, snap.SnapshotID, after.Rows)
	return next, res, nil
}

// newReplaces are the replace snapshots on main's ancestry after head, in
// commit order; an error when head is no longer an ancestor of main.
func newReplaces(tbl *table.Table, head int64) ([]*table.Snapshot, error) {
	md := tbl.Metadata()
	var out []*table.Snapshot
	for s := md.CurrentSnapshot(); s != nil && s.SnapshotID != head; {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace {
			out = append(out, s)
		}
		if s.ParentSnapshotID == nil {
			return nil, fmt.Errorf("snapshot %d, the head the rewrite started from, is no longer an ancestor of main", head)
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	slices.Reverse(out)
	return out, nil
}

// checkDelegated holds an engine's replace snapshot to the commit check
// icewright's own rewrites pass (reach.CheckSnapshots), with the change the
// snapshot's own manifests claim: every other live file and the summary
// totals must be untouched, each file it replaced gone, each output in the
// partition and spec of what it replaced, no more records out than in. The
// planned files must be among those it replaced. The rows themselves are
// compared by the engine's fingerprints (runDelegated).
func checkDelegated(ctx context.Context, tbl *table.Table, snap *table.Snapshot, planned []string) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open table storage: %w", err)
	}
	var g reach.RewriteGroup
	var retired []iceberg.DataFile
	retiredSeq := map[string]int64{} // data sequence numbers, by reach.FileKey
	parts := map[string]bool{}       // the replaced data files' spec and partition
	err = reach.Walk(ctx, reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: []int64{snap.SnapshotID}, Consumers: []reach.Consumer{{
		WithDeleted: true,
		File: func(f reach.File) error {
			if f.Category == reach.CategoryManifest && f.Snapshot != snap.SnapshotID {
				// Only the manifests the snapshot wrote hold its entries:
				// the cost follows the commit, not the table.
				return reach.SkipEntries
			}
			if f.Entry == nil || f.Snapshot != snap.SnapshotID {
				return nil
			}
			df := f.Entry.DataFile()
			switch {
			case f.Category == reach.CategoryData && f.Added:
				g.Outputs = append(g.Outputs, df)
				g.RowsRead += df.Count()
			case f.Category == reach.CategoryData && f.Deleted:
				g.Inputs = append(g.Inputs, df.FilePath())
				parts[fmt.Sprintf("spec %d partition %v", df.SpecID(), df.Partition())] = true
			case f.Category == reach.CategoryDelete && f.Deleted:
				retired = append(retired, df)
				retiredSeq[reach.FileKey(df)] = f.Entry.SequenceNum()
			case f.Category == reach.CategoryDelete && f.Added:
				return fmt.Errorf("snapshot %d adds delete file %s: a rewrite adds none", snap.SnapshotID, df.FilePath())
			}
			return nil
		},
	}}})
	if err != nil {
		return err
	}
	replaced := map[string]bool{}
	for _, p := range g.Inputs {
		replaced[store.NormPath(p)] = true
	}
	var missing []string
	for _, p := range planned {
		if !replaced[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of the %d planned files are still live (first: %s)", len(missing), len(planned), missing[0])
	}
	if len(parts) > 1 {
		// Only the delegated partition's rows are fingerprinted: a data
		// file of another one replaced (or dropped) is not checked.
		return fmt.Errorf("snapshot %d replaces data files of %d partitions (%s): a statement bounded to one partition may replace only that partition's files",
			snap.SnapshotID, len(parts), strings.Join(slices.Sorted(maps.Keys(parts)), "; "))
	}
	if err := retiredDangling(ctx, tbl, snap, retired, retiredSeq); err != nil {
		return err
	}
	// The rows read are the outputs' records here: the engine's rows are
	// compared by fingerprint, and the check still holds them to no more
	// than the inputs' records.
	return reach.CheckSnapshots(ctx, fsys, tbl.Metadata(), *snap.ParentSnapshotID, snap.SnapshotID, reach.Change{Groups: []reach.RewriteGroup{g}, RetiredDeletes: retired})
}

// retiredDangling holds an engine's snapshot to the one rule on the delete
// files it may drop (docs/engines.md): a delete file only when it is
// dangling, no live data file of the new snapshot it can apply to, by the
// rules compaction's own removal uses (compaction.DanglingAgainst: a
// deletion vector or position delete whose data file, by reference or by
// exact file_path bounds, is gone; an equality delete older than every
// live data file it could apply to), and Java's own (MergingSnapshotProducer
// drops every delete file whose data sequence number is below that of
// every live data file of the table: it can apply to none). seq holds the
// retired files' data sequence numbers by reach.FileKey.
func retiredDangling(ctx context.Context, tbl *table.Table, snap *table.Snapshot, retired []iceberg.DataFile, seq map[string]int64) error {
	if len(retired) == 0 {
		return nil
	}
	md := tbl.Metadata()
	parent := md.SnapshotByID(*snap.ParentSnapshotID)
	if parent == nil {
		return fmt.Errorf("snapshot %d's parent %d is not in the metadata", snap.SnapshotID, *snap.ParentSnapshotID)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open table storage: %w", err)
	}
	d, err := compaction.DanglingAgainst(ctx, fsys, md, parent, snap)
	if err != nil {
		return fmt.Errorf("which delete files snapshot %d leaves dangling: %w", snap.SnapshotID, err)
	}
	dangling := map[string]bool{}
	for _, df := range d.Files {
		dangling[reach.FileKey(df)] = true
	}
	minData, err := minDataSequence(fsys, snap)
	if err != nil {
		return err
	}
	var live []string
	for _, df := range retired {
		if k := reach.FileKey(df); !dangling[k] && (seq[k] <= 0 || seq[k] >= minData) {
			live = append(live, df.FilePath())
		}
	}
	if len(live) == 0 {
		return nil
	}
	slices.Sort(live)
	return fmt.Errorf("snapshot %d drops %d delete files that still apply to live data files (first: %s): a rewrite may drop a delete file only when no live data file is left for it to apply to",
		snap.SnapshotID, len(live), live[0])
}

// minDataSequence is the lowest data sequence number a live data file of
// snap can have: the least min_sequence_number of its data manifests that
// hold added or existing files, as Java reckons it (math.MaxInt64 when it
// has none).
func minDataSequence(fsys iceio.IO, snap *table.Snapshot) (int64, error) {
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return 0, fmt.Errorf("read snapshot %d's manifest list: %w", snap.SnapshotID, err)
	}
	least := int64(math.MaxInt64)
	for _, m := range mans {
		if m.ManifestContent() == iceberg.ManifestContentData && (m.HasAddedFiles() || m.HasExistingFiles()) {
			least = min(least, m.MinSequenceNum())
		}
	}
	return least, nil
}

// runDelegatedCalls runs the delegated partitions in the plan's order
// after icewright's own groups (er), each with its outcome in
// er.Partitions; after a failure the rest are not run, and say so.
func runDelegatedCalls(ctx context.Context, tbl *table.Table, run delegatedRun, calls []diff.EngineCall, er store.Result) (*table.Table, store.Result, error) {
	var failed error
	for _, call := range calls {
		if failed != nil {
			er.Partitions = append(er.Partitions, diff.PartitionOutcome{Partition: call.Partition, Engine: call.Engine, Status: diff.PartitionSkipped,
				Detail: "not run: an earlier partition failed"})
			continue
		}
		next, dr, err := runDelegated(ctx, tbl, run, call)
		tbl, failed = next, err
		er = mergeDelegated(er, dr)
	}
	er.Note = strings.TrimPrefix(er.Note+"; "+delegatedNote(er.Partitions), "; ")
	if failed != nil {
		return tbl, er, failed
	}
	er.FilesAfter, er.BytesAfter = kind.SummaryTotals(ctx, tbl)
	return tbl, er, nil
}

// mergeDelegated adds a delegated partition's result to the action's.
func mergeDelegated(er, dr store.Result) store.Result {
	er.NoOp = er.NoOp && dr.NoOp
	er.Committed = er.Committed || dr.Committed
	er.Snapshots = append(er.Snapshots, dr.Snapshots...)
	er.RowsBefore += dr.RowsBefore
	er.RowsAfter += dr.RowsAfter
	er.MetadataLocation = dr.MetadataLocation
	er.Partitions = append(er.Partitions, dr.Partitions...)
	return er
}

// delegatedNote counts the delegated partitions' outcomes for the action's
// note; each has its own line in the results.
func delegatedNote(ps []diff.PartitionOutcome) string {
	if len(ps) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, p := range ps {
		n[p.Status]++
	}
	var parts []string
	for _, st := range []string{diff.PartitionDone, diff.PartitionSkipped, diff.PartitionFailed} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	return fmt.Sprintf("%s by engine %q: %s", config.CountOf(len(ps), "partition", "partitions"), ps[0].Engine, strings.Join(parts, ", "))
}
