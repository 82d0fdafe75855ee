package expiry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog/glue"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/catalog/hive"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// Spec is exactly what to expire: the snapshot ids and refs the
// (approved, possibly intersected) plan lists. Nothing else is removed.
type Spec struct {
	SnapshotIDs  []int64
	RefsToRemove []string
	// Delete paces the deletions of the released files (objdel.Run:
	// batch size, requests in flight, cooldown; zero values: defaults).
	Delete objdel.Settings
	// StorageProps are the catalog block's properties, with which the
	// deletion opens its store (objdel.ForIO: GCS and Azure credentials
	// and endpoints; S3 uses the table IO's own client).
	StorageProps map[string]string
	Progress     store.Progress
	// Retention, when set, re-checks at commit time that every listed id and
	// ref still qualifies under the policy on the exact table version being
	// committed against (diff.SelectExpired); those that do not are kept and
	// reported. The listed ids stay the upper bound: nothing else is expired.
	Retention *RetentionCheck
	// Abort stops the deletions that follow a landed commit; ctx does not.
	// Once the commit is in, the metadata no longer names the released
	// files, so cancelling there (a first Ctrl-C) would strand them until
	// an orphan sweep days later. Nil: only FinishWithin bounds them.
	Abort context.Context
	// FinishWithin bounds the work after the commit (re-read, computing
	// and deleting the released files); 0 = defaultFinishWithin.
	FinishWithin time.Duration
	// KeepLive, when set, keeps the files live when the apply began that
	// another writer released meanwhile (KeepLive); nil keeps none.
	KeepLive *KeepLive
	// Foreign, when set, is asked right before the deletions which other
	// table references a released file ("" when none): such a file is kept
	// (docs/design.md §8, nothing foreign is deleted). An error (the other
	// tables cannot be read) keeps every file.
	Foreign func(ctx context.Context) (func(path string) string, error)
}

// defaultFinishWithin bounds an expiry's deletions after its commit landed.
const defaultFinishWithin = 10 * time.Minute

// ErrRefDropped marks an expiry commit that landed but took with it a ref
// that a writer created after icewright loaded the table (the catalog applies
// remove-snapshots to its current metadata and drops refs whose snapshot
// is gone). Nothing was deleted; the error names the ref and where its
// snapshot's metadata still is.
var ErrRefDropped = errors.New("the expiry commit dropped a ref created concurrently")

// RetentionCheck is the policy's retention and the clock for the re-check.
type RetentionCheck struct {
	MaxAge       time.Duration
	MinSnapshots int
	MaxRefAge    time.Duration
	Now          time.Time
}

// historyState is the part of diff.TableState that expiry selection reads
// (snapshots, refs, properties), taken from loaded metadata without reading
// any manifest.
func historyState(tbl *table.Table) *diff.TableState {
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

// Expire removes exactly spec's snapshots and refs in one metadata
// commit sent to the catalog with requirements that the table and every ref
// are unchanged, then deletes the files reachable before and not after.
//
// iceberg-go's Transaction.ExpireSnapshots re-selects snapshots itself from
// its own clock and properties and its post-commit cleanup deletes files on
// its own reckoning; neither is what the reviewer approved. So icewright sends
// the RemoveSnapshots update (post-commit deletion off) itself, re-reads the
// committed metadata from the catalog, and deletes only files that no
// snapshot of the re-read metadata reaches.
func Expire(ctx context.Context, cat table.CatalogIO, tbl *table.Table, spec Spec) (*table.Table, store.Result, error) {
	res := store.Result{MetadataLocation: tbl.MetadataLocation()}
	meta := tbl.Metadata()
	if !store.GCEnabled(meta.Properties()) {
		return tbl, res, fmt.Errorf("%w: gc.enabled=false: the table's files may be shared with other tables", store.ErrRefused)
	}
	refs := maps.Collect(meta.Refs())
	if spec.Retention != nil {
		if err := requalify(tbl, &spec, &res); err != nil {
			return tbl, res, err
		}
	}
	ids, refNames, err := targets(meta, refs, spec, &res)
	if err != nil {
		return tbl, res, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return tbl, res, fmt.Errorf("open table storage: %w", err)
	}
	// A file live when the apply began that another writer released since
	// waits for the next run: the snapshots still reaching it stay.
	others := spec.KeepLive.othersCommitted(meta)
	if others && len(ids) > 0 {
		if ids, err = withholdLive(ctx, spec.KeepLive, fs, meta, ids, &res); err != nil {
			return tbl, res, err
		}
	}
	if len(ids) == 0 && len(refNames) == 0 {
		res.NoOp, res.Note = true, "nothing left to expire"
		return tbl, res, nil
	}
	committed, err := commitExpiry(ctx, cat, tbl, refs, ids, refNames)
	if err != nil {
		return tbl, res, err
	}
	res.Committed = true
	res.SnapshotsExpired = len(ids)
	res.RefsRemoved = len(refNames)

	// From here on the released files are no longer named by the metadata:
	// finish deleting them even if ctx is cancelled (docs/design.md §5.4, Ctrl-C),
	// within a bound, unless Abort says stop at once.
	ctx, cancel := finishContext(ctx, spec.Abort, spec.FinishWithin)
	defer cancel()
	fresh, fs, err := checkCommitted(ctx, cat, tbl, committed, ids, refNames, &res)
	if err != nil {
		return fresh, res, err
	}
	doomed, held, foreign, err := filesToDelete(ctx, spec, fs, meta, ids, fresh, others, &res)
	if err != nil {
		return fresh, res, err
	}
	err = deleteReleased(ctx, spec, fs, doomed, held, foreign, &res)
	return fresh, res, err
}

// requalify re-checks, on the table as it is now, that every listed id and
// ref still qualifies under the policy (Spec.Retention): those that do not
// leave spec and are reported as kept. The listed ones stay the upper
// bound.
func requalify(tbl *table.Table, spec *Spec, res *store.Result) error {
	meta := tbl.Metadata()
	rc := spec.Retention
	sel := diff.SelectExpired(historyState(tbl), rc.MaxAge, rc.MinSnapshots, rc.MaxRefAge, 0, rc.Now)
	if sel.Problem != "" {
		return fmt.Errorf("%w: %s", store.ErrRefused, sel.Problem)
	}
	still := map[int64]bool{}
	for _, id := range sel.Expired {
		still[id] = true
	}
	var ids []int64
	for _, id := range spec.SnapshotIDs {
		if still[id] || meta.SnapshotByID(id) == nil {
			ids = append(ids, id) // a missing id is reported by targets
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
	return nil
}

// targets are the snapshot ids (sorted, unique) and ref names (sorted)
// the commit removes: spec's, less what is gone and the snapshots a
// retained ref points at (the ref would dangle). Removing main is refused.
func targets(meta table.Metadata, refs map[string]table.SnapshotRef, spec Spec, res *store.Result) ([]int64, []string, error) {
	removeRefs := map[string]bool{}
	for _, r := range spec.RefsToRemove {
		if r == table.MainBranch {
			return nil, nil, fmt.Errorf("%w: the plan asks to remove ref main", store.ErrRefused)
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
	return ids, refNames, nil
}

// withholdLive drops from ids the snapshots that reach a file live when
// the apply began and released since by another writer's commit.
func withholdLive(ctx context.Context, k *KeepLive, fs iceio.IO, meta table.Metadata, ids []int64, res *store.Result) ([]int64, error) {
	withheld, err := k.withhold(ctx, fs, meta, ids, reach.DefaultSpillLimit)
	if err != nil {
		return nil, fmt.Errorf("expiry (nothing committed): %w", err)
	}
	return slices.DeleteFunc(ids, func(id int64) bool {
		p, ok := withheld[id]
		if ok {
			res.Skipped = append(res.Skipped, fmt.Sprintf("snapshot %d: reaches %s, live when this apply began and released meanwhile by another writer's commit; kept for the next run", id, p))
		}
		return ok
	}), nil
}

// commitExpiry sends the one commit: the refs and snapshots removed, with
// requirements that every ref is unchanged (and, where the catalog
// validates locally, that no new ref points at a removed snapshot and gc
// is still enabled). It returns the committed metadata.
func commitExpiry(ctx context.Context, cat table.CatalogIO, tbl *table.Table, refs map[string]table.SnapshotRef, ids []int64, refNames []string) (table.Metadata, error) {
	meta := tbl.Metadata()
	var updates []table.Update
	for _, r := range refNames {
		updates = append(updates, table.NewRemoveSnapshotRefUpdate(r))
	}
	if len(ids) > 0 {
		updates = append(updates, table.NewRemoveSnapshotsUpdate(ids, false))
	}
	reqs := store.RefRequirements(meta)
	if validatesLocally(cat) {
		reqs = append(reqs, noNewRefsAt{removed: idSet(ids), known: refs}, gcStillEnabled{})
	}
	if err := ctx.Err(); err != nil {
		// Interrupted before the commit was sent: nothing changed.
		return nil, fmt.Errorf("interrupted before the expiry commit: %w", err)
	}
	// Once sent, the commit is not cancelled halfway: Ctrl-C lets it finish
	// or fail cleanly; a catalog that stops answering ends it at its bound.
	commitCtx, cancelCommit := bound.Commit(ctx)
	committed, _, err := cat.CommitTable(commitCtx, tbl.Identifier(), reqs, updates)
	cancelCommit()
	if err != nil {
		return nil, fmt.Errorf("commit expiry: %w", store.ClassifyCommit(err))
	}
	return committed, nil
}

// checkCommitted re-checks, after the commit landed and before any
// deletion, that deleting is still safe, and returns the table as the
// catalog holds it now (on an error, the table to report) and its storage
// opened with ctx. Any doubt deletes nothing (res.Note says so).
func checkCommitted(ctx context.Context, cat table.CatalogIO, tbl *table.Table, committed table.Metadata, ids []int64, refNames []string, res *store.Result) (*table.Table, iceio.IO, error) {
	meta := tbl.Metadata()
	ident := tbl.Identifier()
	// iceberg-go's blob FS sends every request with the context it was
	// opened with: the storage of what follows is opened with this one,
	// or an interrupted ctx would fail every read and delete on an object
	// store.
	fs, err := tbl.FS(ctx)
	if err != nil {
		res.Note = "expiry committed; the table's storage could not be opened again, so no file was deleted"
		return tbl, nil, fmt.Errorf("open table storage after expiry (nothing deleted): %w", err)
	}

	// Another engine may have set gc.enabled=false after icewright loaded
	// the table: the catalog then committed the expiry on top of it (a
	// catalog that validates on its server cannot be given gcStillEnabled).
	// The released files may be another table's now: none is deleted.
	if committed != nil && !store.GCEnabled(committed.Properties()) {
		res.Note = "expiry committed on metadata that says gc.enabled=false (set by another writer meanwhile); no file was deleted"
		return tbl, nil, fmt.Errorf("%w: gc.enabled=false was set while the expiry ran: the released files may be shared with other tables; nothing deleted", store.ErrRefused)
	}
	if err := checkRefsKept(ctx, ident, fs, cat, tbl, committed, refNames); err != nil {
		res.Note = "expiry committed; no file was deleted"
		return tbl, nil, err
	}

	// Re-read what the catalog now holds: a writer may have committed right
	// after us, and its snapshots count as retained too.
	fresh, err := cat.LoadTable(ctx, ident)
	if err != nil {
		res.Note = "expiry committed but the table could not be re-read; no file was deleted"
		return tbl, nil, fmt.Errorf("re-read after expiry (nothing deleted): %w", err)
	}
	res.MetadataLocation = fresh.MetadataLocation()
	fm := fresh.Metadata()
	if fm.TableUUID() != meta.TableUUID() {
		res.Note = "table replaced right after expiry; no file was deleted"
		return fresh, nil, fmt.Errorf("%w: table UUID changed after expiry commit; nothing deleted", store.ErrRefused)
	}
	if !store.GCEnabled(fm.Properties()) {
		res.Note = "expiry committed; the table now says gc.enabled=false (set by another writer meanwhile), so no file was deleted"
		return fresh, nil, fmt.Errorf("%w: gc.enabled=false was set while the expiry ran: the released files may be shared with other tables; nothing deleted", store.ErrRefused)
	}
	for _, id := range ids {
		if fm.SnapshotByID(id) != nil {
			res.Note = "an expired snapshot is still present after the commit; no file was deleted"
			return fresh, nil, fmt.Errorf("%w: snapshot %d still in committed metadata; nothing deleted", store.ErrRefused, id)
		}
	}
	return fresh, fs, nil
}

// filesToDelete are the files the commit released, sorted, less those
// kept: live when the apply began and released by another writer
// meanwhile (held), or referenced by another table (foreign).
//
// They are computed after the commit from the base metadata (its
// manifests are all still there: nothing is deleted yet), so the window in
// which a concurrent writer makes the commit conflict stays short.
// Released: what the snapshots this commit removed reach (only those: if
// someone else expired others meanwhile, their files are theirs to
// delete). Kept: what every snapshot of the re-read metadata reaches, plus
// every metadata file it names. Both sides go through reach's external
// sorter, so memory stays bounded however many files the table has, and
// are compared by a sorted merge.
func filesToDelete(ctx context.Context, spec Spec, fs iceio.IO, meta table.Metadata, ids []int64, fresh *table.Table, others bool, res *store.Result) (doomed, held, foreign []fileRef, err error) {
	var goneIDs []int64
	for _, id := range ids {
		if meta.SnapshotByID(id) != nil {
			goneIDs = append(goneIDs, id)
		}
	}
	doomed, err = releasedFiles(ctx, fs, meta, goneIDs, fresh, reach.DefaultSpillLimit)
	if err != nil {
		res.Note = "expiry committed; the files it released could not be computed, so no file was deleted"
		return nil, nil, nil, fmt.Errorf("files released by expiry (nothing deleted): %w", err)
	}
	if others {
		// The commit asserted every ref unchanged since meta, so withhold
		// saw every release; this catches one it did not foresee.
		if doomed, held, err = spec.KeepLive.hold(ctx, fs, meta, doomed, reach.DefaultSpillLimit); err != nil {
			res.Note = "expiry committed; the files live when the apply began could not be read, so no file was deleted"
			return nil, nil, nil, fmt.Errorf("files released by expiry (nothing deleted): %w", err)
		}
	}
	if spec.Foreign != nil && len(doomed) > 0 {
		owner, err := spec.Foreign(ctx)
		if err != nil {
			// Another table could reference any of them (a catalog that
			// cannot be listed): every released file is kept, as for a
			// table that cannot be read. The expiry itself landed, and, as
			// Iceberg's own expire_snapshots does with files it cannot
			// delete, apply says so instead of failing: they are
			// unreferenced here, so a sweep removes them once every table
			// can be read.
			reason := "other tables could not be read (" + err.Error() + ")"
			owner = func(string) string { return "possibly another table: " + reason }
		}
		doomed = slices.DeleteFunc(doomed, func(f fileRef) bool {
			o := owner(f.path)
			if o != "" {
				foreign = append(foreign, fileRef{path: f.path + ": referenced by " + o + ", kept"})
			}
			return o != ""
		})
	}
	slices.SortFunc(doomed, func(a, b fileRef) int { return strings.Compare(a.path, b.path) })
	return doomed, held, foreign, nil
}

// deleteReleased deletes doomed and says in res what was left and kept;
// a store judged unresponsive is the one error (the action failed).
func deleteReleased(ctx context.Context, spec Spec, fs iceio.IO, doomed, held, foreign []fileRef, res *store.Result) error {
	// A second interrupt stops the deletions at once, within a batch too.
	set := spec.Delete
	set.StopAtOnce = true
	kept, stopped := deleteFiles(ctx, fs, doomed, set, spec.StorageProps, spec.Progress, res)
	var notes []string
	if res.FilesLeft > 0 {
		notes = append(notes, fmt.Sprintf("stopped before the end (%v): %d released files were not deleted; they are unreferenced, so an orphan sweep removes them",
			stopped, res.FilesLeft))
	}
	if kept > 0 {
		notes = append(notes, fmt.Sprintf("%d released files named by file: URIs with percent-escapes were left, under both names: a file has the decoded name too (see not applied)", kept))
	}
	if len(held) > 0 {
		notes = append(notes, fmt.Sprintf("%d released files were live when this apply began and another writer's commit released them meanwhile: kept for the next run (see not applied)", len(held)))
		listKept(res, held, func(f fileRef) string {
			return f.path + ": live when this apply began, released meanwhile by another writer's commit; kept for the next run"
		}, "files live when this apply began, kept for the same reason")
	}
	if len(foreign) > 0 {
		notes = append(notes, fmt.Sprintf("%d released files are referenced by other tables: kept (see not applied)", len(foreign)))
		listKept(res, foreign, func(f fileRef) string { return f.path }, "files other tables reference, kept")
	}
	res.Note = strings.Join(notes, "; ")
	if errors.Is(stopped, bound.ErrUnresponsive) {
		// Not an interrupt the user asked for: the action failed (exit 1).
		return fmt.Errorf("expiry committed; %d released files not deleted: %w", res.FilesLeft, stopped)
	}
	return nil
}

// listKept adds to res.Skipped a line for each of the files kept for one
// reason, in path order, at most maxKeptListed of them and then how many
// more there are.
func listKept(res *store.Result, files []fileRef, line func(fileRef) string, more string) {
	slices.SortFunc(files, func(a, b fileRef) int { return strings.Compare(a.path, b.path) })
	for i, f := range files {
		if i == maxKeptListed {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%d more %s", len(files)-maxKeptListed, more))
			return
		}
		res.Skipped = append(res.Skipped, line(f))
	}
}

// finishContext is the context of the work after a landed commit: not
// cancelled with parent, cancelled by abort, and bounded by within.
func finishContext(parent, abort context.Context, within time.Duration) (context.Context, context.CancelFunc) {
	if within <= 0 {
		within = defaultFinishWithin
	}
	ctx, cancelTimeout := context.WithTimeoutCause(context.WithoutCancel(parent), within,
		fmt.Errorf("the deletions after the commit took longer than %s", within))
	ctx, cancel := context.WithCancelCause(ctx)
	stop := func() bool { return true }
	if abort != nil {
		stop = context.AfterFunc(abort, func() { cancel(errors.New("stopped at once (second interrupt)")) })
	}
	return ctx, func() { stop(); cancel(nil); cancelTimeout() }
}

func idSet(ids []int64) map[int64]bool {
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// noNewRefsAt fails the commit when the table the catalog commits against
// has a ref icewright did not load pointing at a snapshot being removed.
// iceberg-go's (and Java's) remove-snapshots silently drops such a ref,
// and none of the standard requirements can see it: AssertRefSnapshotID
// needs the name in advance. A writer that tags a snapshot while icewright
// expires it thus makes the expiry conflict, and apply re-plans with the
// tag protecting its snapshot.
//
// Only catalogs that check requirements in this process (validatesLocally)
// get it: a REST catalog would refuse an unknown requirement type, so there
// checkRefsKept detects the drop after the commit instead.
type noNewRefsAt struct {
	removed map[int64]bool
	known   map[string]table.SnapshotRef
}

func (noNewRefsAt) GetType() string { return "icewright-assert-no-new-refs-on-removed-snapshots" }

func (a noNewRefsAt) Validate(m table.Metadata) error {
	if m == nil {
		return errors.New("requirement failed: current table metadata does not exist")
	}
	for name, ref := range m.Refs() {
		if _, ok := a.known[name]; !ok && a.removed[ref.SnapshotID] {
			return fmt.Errorf("requirement failed: %s %q was created concurrently on snapshot %d, which this commit expires",
				ref.SnapshotRefType, name, ref.SnapshotID)
		}
	}
	return nil
}

// gcStillEnabled fails the commit when the metadata the catalog commits
// against says gc.enabled=false: another engine turned garbage collection
// off after icewright loaded the table, and the files this expiry would
// release may now be shared with another table. Only for catalogs that
// validate here (validatesLocally); elsewhere Expire checks the committed
// metadata and deletes nothing.
type gcStillEnabled struct{}

func (gcStillEnabled) GetType() string { return "icewright-assert-gc-enabled" }

func (gcStillEnabled) Validate(m table.Metadata) error {
	if m == nil {
		return errors.New("requirement failed: current table metadata does not exist")
	}
	if !store.GCEnabled(m.Properties()) {
		return fmt.Errorf("requirement failed: gc.enabled is %q: set while the expiry ran", m.Properties()[table.GCEnabledKey])
	}
	return nil
}

// validatesLocally reports whether cat checks commit requirements in this
// process against the metadata it then swaps (iceberg-go's sql, glue, hive
// and hadoop catalogs), so a requirement of icewright's own is enforced. A
// wrapper (tests) says what it wraps with Unwrap.
func validatesLocally(cat table.CatalogIO) bool {
	switch c := cat.(type) {
	case *sqlcat.Catalog, *glue.Catalog, *hive.Catalog, *hadoop.Catalog:
		return true
	case interface{ Unwrap() table.CatalogIO }:
		return validatesLocally(c.Unwrap())
	}
	return false
}

// checkRefsKept compares the metadata the catalog committed against (the
// last entry of the committed metadata's log) with what it committed: a
// ref there that is gone now and that the plan did not remove was dropped
// by remove-snapshots, because a writer created it on an expired snapshot
// after icewright loaded the table. Then nothing may be deleted: the files
// are the only copy of what that ref reads. Re-adding the snapshot is not
// possible in general (a catalog refuses a snapshot whose sequence number
// is below the table's), so the action fails with the exact state.
func checkRefsKept(ctx context.Context, ident table.Identifier, fs iceio.IO, cat table.CatalogIO, loaded *table.Table, committed table.Metadata, removedRefs []string) error {
	if committed == nil {
		c, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return fmt.Errorf("re-read after expiry (nothing deleted): %w", err)
		}
		committed = c.Metadata()
	}
	var baseLoc string
	for e := range committed.PreviousFiles() {
		baseLoc = e.MetadataFile
	}
	if baseLoc == "" {
		return fmt.Errorf("%w: the committed metadata has no metadata log, so icewright cannot check that no ref created meanwhile was dropped; nothing deleted", store.ErrRefused)
	}
	if store.NormPath(baseLoc) == store.NormPath(loaded.MetadataLocation()) {
		// Committed against exactly what icewright loaded: its refs were all
		// asserted and none pointed at an expired snapshot.
		return nil
	}
	base, err := table.NewFromLocation(ctx, ident, baseLoc, func(context.Context) (iceio.IO, error) { return fs, nil }, cat)
	if err != nil {
		return fmt.Errorf("read the metadata the expiry committed against, %s, to check its refs (nothing deleted): %w", baseLoc, err)
	}
	after := maps.Collect(committed.Refs())
	planned := map[string]bool{}
	for _, r := range removedRefs {
		planned[r] = true
	}
	var lost []string
	for name, ref := range base.Metadata().Refs() {
		if _, ok := after[name]; ok || planned[name] {
			continue
		}
		what := fmt.Sprintf("%s %q on snapshot %d", ref.SnapshotRefType, name, ref.SnapshotID)
		if s := base.Metadata().SnapshotByID(ref.SnapshotID); s != nil {
			what += fmt.Sprintf(" (manifest list %s)", s.ManifestList)
		}
		lost = append(lost, what)
	}
	if len(lost) == 0 {
		return nil
	}
	slices.Sort(lost)
	return fmt.Errorf("%w: %s; a writer created it after icewright loaded the table and the catalog removed it with the expired snapshot. "+
		"No file was deleted: every file it reads is still there, and its definition is in %s",
		ErrRefDropped, strings.Join(lost, ", "), baseLoc)
}

// deleteFiles removes files in batches through the table storage's
// objdel.Store (one per bucket); a failed delete is recorded and the rest
// go on (docs/design.md §5.5 rule 9). A file already gone counts as
// deleted: the goal state holds. Cancellation, or the store judged
// unresponsive, stops the run at a batch boundary; the files never sent
// are counted in res.FilesLeft.
//
// Each file is removed under the name store.DeletionName allows, decided
// right before its batch is sent: a file: URI whose path changes when
// decoded only under its literal name, and only while no file has the
// decoded one; otherwise neither name goes, the file is not counted as
// deleted, and it is listed in res.Skipped with why (at most
// maxKeptListed of them; kept counts them all).
func deleteFiles(ctx context.Context, fs iceio.IO, files []fileRef, set objdel.Settings, props map[string]string, progress store.Progress, res *store.Result) (kept int, stopped error) {
	total := int64(len(files))
	progress.Report(0, total, "files")
	var (
		mu    sync.Mutex // res, kept, done and sizes: Check runs beside Done
		done  int64
		sizes = make([]int64, len(files))
		locs  = make([]string, len(files))
	)
	for i, f := range files {
		locs[i] = f.path
	}
	stopped = objdel.RunGrouped(ctx, locs, func(i int) string { return store.Storage(locs[i]) }, func(bucket string) (objdel.Store, error) {
		return objdel.ForIO(ctx, fs, props, bucket)
	}, set, objdel.Hooks{
		Check: func(i int) (string, bool) {
			f := files[i]
			name, why, err := store.DeletionName(fs, f.path)
			if err == nil && why == "" {
				size := f.size
				if size < 0 {
					size = statSize(fs, name)
				}
				sizes[i] = size
				return name, true
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: %v", f.path, err))
				return "", false
			}
			if kept++; kept <= maxKeptListed {
				res.Skipped = append(res.Skipped, f.path+": "+why)
			}
			done++
			progress.Report(done, total, "files")
			return "", false
		},
		Done: func(i int, err error) {
			f := files[i]
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil || store.IsNotExist(err):
				res.FilesDeleted++
				if size := sizes[i]; size > 0 {
					res.BytesFreed += size
				}
				done++
				progress.Report(done, total, "files")
			case errors.Is(err, objdel.ErrNotSent):
				res.FilesLeft++
			case bound.Unanswered(err):
				res.FilesPlaceUnknown++
				res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: place unknown: its delete got no answer, it may be gone or still there: %v", f.path, err))
			default:
				res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: %v", f.path, err))
			}
		},
		// Counted, not listed: the rest may be a million paths.
		Left: func(int, error) {
			mu.Lock()
			res.FilesLeft++
			mu.Unlock()
		},
	})
	slices.Sort(res.DeleteErrors)
	if kept > maxKeptListed {
		res.Skipped = append(res.Skipped, fmt.Sprintf("%d more released files named by file: URIs with percent-escapes, left for the same reason", kept-maxKeptListed))
	}
	return kept, stopped
}

// maxKeptListed bounds the released files deleteFiles names in
// Result.Skipped (the count is exact).
const maxKeptListed = 100

func statSize(fs iceio.IO, p string) int64 {
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

// releasedFiles lists the files that the snapshots goneIDs of base reach
// and that no snapshot of kept (the re-read table) reaches, excluding every
// metadata file kept names. Both sets are external-sorted, holding at most
// limit records in memory each.
func releasedFiles(ctx context.Context, fs iceio.IO, base table.Metadata, goneIDs []int64, kept *table.Table, limit int) ([]fileRef, error) {
	released, keep := reach.NewSorter(limit), reach.NewSorter(limit)
	defer released.Close()
	defer keep.Close()
	// A file: URI whose path changes when decoded (store.LiteralKey) names
	// two local files. Only its literal name is ever deleted
	// (store.DeletionName), so that is its key on the released side; on
	// the kept side both of its names are kept.
	err := walk(ctx, fs, base, goneIDs, true, func(f reach.File) error {
		key := store.NormPath(f.Path)
		if lit, ok := store.LiteralKey(f.Path); ok {
			key = lit
		}
		return released.Add(reach.Rec{Key: key, Aux: f.Path, N1: f.Size})
	})
	if err != nil {
		return nil, err
	}
	keepPath := func(p string) error {
		if err := keep.Add(reach.Rec{Key: store.NormPath(p)}); err != nil {
			return err
		}
		if lit, ok := store.LiteralKey(p); ok {
			return keep.Add(reach.Rec{Key: lit})
		}
		return nil
	}
	km := kept.Metadata()
	err = walk(ctx, fs, km, reach.AllSnapshots(km), false, func(f reach.File) error {
		return keepPath(f.Path)
	})
	if err != nil {
		return nil, err
	}
	if err := keepPath(kept.MetadataLocation()); err != nil {
		return nil, err
	}
	for e := range km.PreviousFiles() {
		if err := keepPath(e.MetadataFile); err != nil {
			return nil, err
		}
	}
	var out []fileRef
	err = unmatched(released, keep, func(r reach.Rec) error {
		size := r.N1
		if size <= 0 {
			size = -1 // unknown: stat'ed when deleted
		}
		out = append(out, fileRef{path: r.Aux, size: size})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fileRef is one file expiry deletes.
type fileRef struct {
	path string // as written in the metadata
	size int64  // -1 when the metadata does not say
}
