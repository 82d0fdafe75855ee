package providers

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
)

// ExpireSpec is exactly what to expire: the snapshot ids and refs the
// (approved, possibly intersected) plan lists. Nothing else is removed.
type ExpireSpec struct {
	SnapshotIDs  []int64
	RefsToRemove []string
	// DeleteConcurrency bounds parallel deletions (default 8).
	DeleteConcurrency int
	Progress          ExecProgress
	// Retention, when set, re-checks at commit time that every listed id and
	// ref still qualifies under the policy on the exact table version being
	// committed against (diff.SelectExpired); those that do not are kept and
	// reported. The listed ids stay the upper bound: nothing else is expired.
	Retention *RetentionCheck
}

// RetentionCheck is the policy's retention and the clock for the re-check.
type RetentionCheck struct {
	MaxAge       time.Duration
	MinSnapshots int
	MaxRefAge    time.Duration
	Now          time.Time
}

// HistoryState is the part of diff.TableState that expiry selection reads
// (snapshots, refs, properties), taken from loaded metadata without reading
// any manifest.
func HistoryState(tbl *table.Table) *diff.TableState {
	md := tbl.Metadata()
	st := &diff.TableState{
		UUID:             md.TableUUID().String(),
		MetadataLocation: tbl.MetadataLocation(),
		Location:         md.Location(),
		Properties:       maps.Clone(map[string]string(md.Properties())),
	}
	if st.Properties == nil {
		st.Properties = map[string]string{}
	}
	if cur := md.CurrentSnapshot(); cur != nil {
		id := cur.SnapshotID
		st.CurrentSnapshotID = &id
	}
	for _, s := range md.Snapshots() {
		ds := diff.Snapshot{ID: s.SnapshotID, ParentID: s.ParentSnapshotID, TimestampMs: s.TimestampMs, ManifestList: s.ManifestList}
		if s.SequenceNumber != 0 {
			ds.SequenceNumber = s.SequenceNumber
		}
		st.Snapshots = append(st.Snapshots, ds)
	}
	for name, ref := range md.Refs() {
		st.Refs = append(st.Refs, diff.Ref{Name: name, Type: string(ref.SnapshotRefType), SnapshotID: ref.SnapshotID,
			MinSnapshotsToKeep: ref.MinSnapshotsToKeep, MaxSnapshotAgeMs: ref.MaxSnapshotAgeMs, MaxRefAgeMs: ref.MaxRefAgeMs})
	}
	slices.SortFunc(st.Refs, func(a, b diff.Ref) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// GCEnabled reports the table's gc.enabled (absent means true, as in Java
// and iceberg-go).
func GCEnabled(props map[string]string) bool {
	v, ok := props[table.GCEnabledKey]
	return !ok || strings.EqualFold(strings.TrimSpace(v), "true")
}

// ExpireSnapshots removes exactly spec's snapshots and refs in one metadata
// commit sent to the catalog with requirements that the table and every ref
// are unchanged, then deletes the files reachable before and not after.
//
// iceberg-go's Transaction.ExpireSnapshots re-selects snapshots itself from
// its own clock and properties and its post-commit cleanup deletes files on
// its own reckoning; neither is what the reviewer approved. So iceops sends
// the RemoveSnapshots update (post-commit deletion off) itself, re-reads the
// committed metadata from the catalog, and deletes only files that no
// snapshot of the re-read metadata reaches.
func ExpireSnapshots(ctx context.Context, cat table.CatalogIO, tbl *table.Table, spec ExpireSpec) (*table.Table, ExecResult, error) {
	res := ExecResult{MetadataLocation: tbl.MetadataLocation()}
	meta := tbl.Metadata()
	if !GCEnabled(meta.Properties()) {
		return tbl, res, fmt.Errorf("%w: gc.enabled=false: the table's files may be shared with other tables", ErrRefused)
	}
	refs := execRefMap(meta)
	if rc := spec.Retention; rc != nil {
		sel := diff.SelectExpired(HistoryState(tbl), rc.MaxAge, rc.MinSnapshots, rc.MaxRefAge, 0, rc.Now)
		if sel.Problem != "" {
			return tbl, res, fmt.Errorf("%w: %s", ErrRefused, sel.Problem)
		}
		still := map[int64]bool{}
		for _, id := range sel.Expired {
			still[id] = true
		}
		var ids []int64
		for _, id := range spec.SnapshotIDs {
			if still[id] || meta.SnapshotByID(id) == nil {
				ids = append(ids, id) // a missing id is reported below
			} else {
				res.Skipped = append(res.Skipped, fmt.Sprintf("snapshot %d: no longer qualifies for expiry, kept", id))
			}
		}
		stillRef := map[string]bool{}
		for _, r := range sel.RefsToRemove {
			stillRef[r] = true
		}
		var keepRefs []string
		for _, r := range spec.RefsToRemove {
			if stillRef[r] {
				keepRefs = append(keepRefs, r)
			} else {
				res.Skipped = append(res.Skipped, fmt.Sprintf("ref %q: no longer qualifies for removal, kept", r))
			}
		}
		spec.SnapshotIDs, spec.RefsToRemove = ids, keepRefs
	}
	removeRefs := map[string]bool{}
	for _, r := range spec.RefsToRemove {
		if r == table.MainBranch {
			return tbl, res, fmt.Errorf("%w: the plan asks to remove ref main", ErrRefused)
		}
		if _, ok := refs[r]; ok {
			removeRefs[r] = true
		} else {
			res.Skipped = append(res.Skipped, fmt.Sprintf("ref %q: no longer exists", r))
		}
	}
	// A snapshot a retained ref points at is never expired, whatever the
	// plan says: the ref would dangle.
	heads := map[int64]string{}
	for name, ref := range refs {
		if !removeRefs[name] {
			heads[ref.SnapshotID] = name
		}
	}
	var ids []int64
	for _, id := range spec.SnapshotIDs {
		switch {
		case meta.SnapshotByID(id) == nil:
			res.Skipped = append(res.Skipped, fmt.Sprintf("snapshot %d: already gone", id))
		case heads[id] != "":
			res.Skipped = append(res.Skipped, fmt.Sprintf("snapshot %d: head of ref %q, kept", id, heads[id]))
		default:
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var refNames []string
	for r := range removeRefs {
		refNames = append(refNames, r)
	}
	slices.Sort(refNames)
	if len(ids) == 0 && len(refNames) == 0 {
		res.NoOp, res.Note = true, "nothing left to expire"
		return tbl, res, nil
	}

	fs, err := tbl.FS(ctx)
	if err != nil {
		return tbl, res, fmt.Errorf("open table storage: %w", err)
	}

	var updates []table.Update
	for _, r := range refNames {
		updates = append(updates, table.NewRemoveSnapshotRefUpdate(r))
	}
	if len(ids) > 0 {
		updates = append(updates, table.NewRemoveSnapshotsUpdate(ids, false))
	}
	ident := tbl.Identifier()
	// Once sent, the commit is not cancelled halfway: Ctrl-C lets it finish
	// or fail cleanly.
	commitCtx := context.WithoutCancel(ctx)
	if _, _, err := cat.CommitTable(commitCtx, ident, execRefRequirements(meta), updates); err != nil {
		return tbl, res, fmt.Errorf("commit expiry: %w", execClassifyCommitErr(err))
	}
	res.Committed = true
	res.SnapshotsExpired = len(ids)
	res.RefsRemoved = len(refNames)

	// Re-read what the catalog now holds: a writer may have committed right
	// after us, and its snapshots count as retained too.
	fresh, err := cat.LoadTable(ctx, ident)
	if err != nil {
		res.Note = "expiry committed but the table could not be re-read; no file was deleted"
		return tbl, res, fmt.Errorf("re-read after expiry (nothing deleted): %w", err)
	}
	res.MetadataLocation = fresh.MetadataLocation()
	fm := fresh.Metadata()
	if fm.TableUUID() != meta.TableUUID() {
		res.Note = "table replaced right after expiry; no file was deleted"
		return fresh, res, fmt.Errorf("%w: table UUID changed after expiry commit; nothing deleted", ErrRefused)
	}
	for _, id := range ids {
		if fm.SnapshotByID(id) != nil {
			res.Note = "an expired snapshot is still present after the commit; no file was deleted"
			return fresh, res, fmt.Errorf("%w: snapshot %d still in committed metadata; nothing deleted", ErrRefused, id)
		}
	}
	// The files to delete are computed after the commit from the base
	// metadata (its manifests are all still there: nothing is deleted yet),
	// so the window in which a concurrent writer makes the commit conflict
	// stays short. Released: what the snapshots this commit removed reach
	// (only those: if someone else expired others meanwhile, their files are
	// theirs to delete). Kept: what every snapshot of the re-read metadata
	// reaches, plus every metadata file it names. Both sides go through
	// providers' external sorter, so memory stays bounded however many
	// files the table has, and are compared by a sorted merge.
	var goneIDs []int64
	for _, id := range ids {
		if meta.SnapshotByID(id) != nil {
			goneIDs = append(goneIDs, id)
		}
	}
	doomed, err := releasedFiles(ctx, fs, meta, goneIDs, fresh, defaultSpillLimit)
	if err != nil {
		res.Note = "expiry committed; the files it released could not be computed, so no file was deleted"
		return fresh, res, fmt.Errorf("files released by expiry (nothing deleted): %w", err)
	}
	slices.SortFunc(doomed, func(a, b execFileRef) int { return strings.Compare(a.path, b.path) })
	execDeleteFiles(ctx, fs, doomed, spec.DeleteConcurrency, spec.Progress, &res)
	return fresh, res, nil
}

// execDeleteFiles removes files with bounded concurrency; a failed delete is
// recorded and the rest go on (DESIGN §5.5 rule 9). A file already gone
// counts as deleted: the goal state holds. Cancellation stops starting new
// deletions.
func execDeleteFiles(ctx context.Context, fs iceio.IO, files []execFileRef, conc int, progress ExecProgress, res *ExecResult) {
	if conc <= 0 {
		conc = 8
	}
	total := int64(len(files))
	progress.report(0, total, "files")
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		sem  = make(chan struct{}, conc)
		done int64
	)
	for _, f := range files {
		if ctx.Err() != nil {
			mu.Lock()
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not deleted: %v", f.path, ctx.Err()))
			mu.Unlock()
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(f execFileRef) {
			defer wg.Done()
			defer func() { <-sem }()
			size := f.size
			if size < 0 {
				size = execStatSize(fs, f.path)
			}
			err := fs.Remove(f.path)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !execIsNotExist(err) {
				res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: %v", f.path, err))
				return
			}
			res.FilesDeleted++
			if size > 0 {
				res.BytesFreed += size
			}
			done++
			progress.report(done, total, "files")
		}(f)
	}
	wg.Wait()
	slices.Sort(res.DeleteErrors)
}

func execStatSize(fs iceio.IO, p string) int64 {
	f, err := fs.Open(p)
	if err != nil {
		return -1
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}

// ExpiryEstimate counts the files and bytes that expiring ids would delete
// from the table as it is now: reachable from any snapshot and not from the
// snapshots that stay. It is the same computation ExpireSnapshots does after
// its commit, so the plan shows what apply will delete. (Compaction's commit
// in the same plan adds to it; the figure covers existing files only.)
func ExpiryEstimate(ctx context.Context, tbl *table.Table, ids []int64) (files, bytes int64, err error) {
	meta := tbl.Metadata()
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("open table storage: %w", err)
	}
	drop := map[int64]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	var keep []table.Snapshot
	for _, s := range meta.Snapshots() {
		if !drop[s.SnapshotID] {
			keep = append(keep, s)
		}
	}
	var gone []table.Snapshot
	for _, s := range meta.Snapshots() {
		if drop[s.SnapshotID] {
			gone = append(gone, s)
		}
	}
	after, err := execReachableFiles(ctx, fs, meta, keep, false)
	if err != nil {
		return 0, 0, err
	}
	before, err := execReleased(ctx, fs, meta, gone, after)
	if err != nil {
		return 0, 0, err
	}
	for k, f := range before {
		if _, ok := after[k]; ok {
			continue
		}
		files++
		if f.size < 0 {
			f.size = execStatSize(fs, f.path)
		}
		if f.size > 0 {
			bytes += f.size
		}
	}
	return files, bytes, nil
}

// releasedFiles lists the files that the snapshots goneIDs of base reach
// and that no snapshot of kept (the re-read table) reaches, excluding every
// metadata file kept names. Both sets are external-sorted, holding at most
// limit records in memory each.
func releasedFiles(ctx context.Context, fs iceio.IO, base table.Metadata, goneIDs []int64, kept *table.Table, limit int) ([]execFileRef, error) {
	released, keep := newExtSorter(limit), newExtSorter(limit)
	defer released.Close()
	defer keep.Close()
	err := walkReachable(ctx, fs, base, goneIDs, false, func(p string, size int64, _ string) error {
		return released.Add(sortRec{key: execNormPath(p), aux: p, n1: size})
	})
	if err != nil {
		return nil, err
	}
	km := kept.Metadata()
	var keptIDs []int64
	for _, s := range km.Snapshots() {
		keptIDs = append(keptIDs, s.SnapshotID)
	}
	err = walkReachable(ctx, fs, km, keptIDs, false, func(p string, _ int64, _ string) error {
		return keep.Add(sortRec{key: execNormPath(p)})
	})
	if err != nil {
		return nil, err
	}
	if err := keep.Add(sortRec{key: execNormPath(kept.MetadataLocation())}); err != nil {
		return nil, err
	}
	for e := range km.PreviousFiles() {
		if err := keep.Add(sortRec{key: execNormPath(e.MetadataFile)}); err != nil {
			return nil, err
		}
	}
	next, stop := iter.Pull2(keep.Sorted())
	defer stop()
	k, kerr, kok := next()
	var out []execFileRef
	last, first := "", true
	for r, err := range released.Sorted() {
		if err != nil {
			return nil, err
		}
		if !first && r.key == last {
			continue
		}
		last, first = r.key, false
		for kok && kerr == nil && k.key < r.key {
			k, kerr, kok = next()
		}
		if kerr != nil {
			return nil, kerr
		}
		if kok && k.key == r.key {
			continue
		}
		size := r.n1
		if size <= 0 {
			size = -1 // unknown: stat'ed when deleted
		}
		out = append(out, execFileRef{path: r.aux, size: size})
	}
	return out, nil
}
