package orphans

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/catalogs"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/meter"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/objlist"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// minAge is the floor of orphan_files.older_than (docs/design.md §3.2).
const minAge = 24 * time.Hour

// relistAbove is the number of planned paths from which Remove re-lists an
// object store's roots instead of stat'ing each path (one S3 listing page
// covers 1,000 objects): diff's, whose estimate counts the requests.
const relistAbove = diff.OrphanRelistAbove

// Spec is the approved list of orphan paths and the age guard.
type Spec struct {
	Paths     []string
	OlderThan time.Duration
	Now       time.Time
	// DeleteConcurrency bounds the requests in flight: batches on a store
	// with a batch delete (objdel.DefaultConcurrency), single deletes and
	// quarantine moves otherwise (default 8). BatchSize is how many files
	// one batch holds (default 1,000, and at most what the store's batch
	// API takes); Cooldown is the pause after a batch before the next
	// (docs/catalogs.md, icewright.delete-*). Deletes and moves stop at a
	// batch boundary when interrupted.
	DeleteConcurrency int
	BatchSize         int
	Cooldown          time.Duration
	Progress          store.Progress
	// Quarantine moves the orphans under
	// <table location>/.icewright-quarantine/<run-id>/ (keeping their relative
	// paths, with a manifest) instead of deleting them, when the policy sets
	// orphan_files.quarantine. QuarantineFor is that duration, recorded in
	// the run's manifest as its purge time: a later plan lists the run once
	// that time has passed (PurgeRuns), and that plan's apply purges it.
	// Without it the run records no purge time and is kept until a person
	// acts.
	Quarantine    bool
	QuarantineFor time.Duration
	// RunID names the quarantine run (default: Now as 20061102T150405Z).
	RunID string
	// PurgeRuns are the quarantine runs the plan listed as due. Only these
	// are purged, each only while its manifest is the one planned and it is
	// due at Now; with or without Quarantine (a run keeps its purge time
	// when the policy changes).
	PurgeRuns []diff.PurgeRun
	// OtherTables is every table the run can see, fresh (not the plan's),
	// for the re-check of tables that overlap the sweep or reference files
	// in it (Env.OtherTables); Address is this table's key in it. Nil reads
	// the tables of the table's own catalog, keyed by namespace.table.
	OtherTables func(ctx context.Context) (*Tables, error)
	Address     string
	// The policy's orphan_files.equal_schemes, equal_authorities and
	// allow_storage_roots, applied as the plan applied them.
	EqualSchemes, EqualAuthorities map[string]string
	AllowStorageRoots              []string
	// StorageProps are the catalog block's properties: the storage
	// settings for roots outside the table location's storage
	// (rootStorage). Nil refuses such roots unless they need none.
	StorageProps map[string]string

	// Recheck scans the table's storage again and holds the plan's rules
	// on that scan (diff.RecheckOrphans), right before anything is
	// deleted: a saved plan's listing may no longer be true (a referenced
	// file vanished, the ratio grew, a planned file was rewritten). It
	// returns what the rules allow now, or refuses (store.ErrRefused). The
	// session always sets it (Kind.Execute); tests of the rules
	// below it may leave it nil.
	Recheck func(ctx context.Context, tbl *table.Table) (*diff.OrphansAction, error)

	// remove replaces the storage's Remove (tests inject failures);
	// beforeMove runs after the quarantine manifest is written and before
	// the first move (tests run a concurrent apply there); move wraps each
	// quarantine move, on an object store each copy (tests stall the store
	// while moves are under way).
	remove     func(path string) error
	beforeMove func()
	move       func(src string, do func() (placeState, error)) (placeState, error)
}

// Remove deletes the planned orphan paths that are, at apply time, still
// orphans (docs/design.md §5.5 rules 1, 2, 5, 6, 7):
//   - gc.enabled=false and an age guard below 24h are refused;
//   - only paths inside the table's sweep roots (sweepRoots, the plan's
//     rule) are considered, and the roots must pass the plan's checks
//     (rootProblem);
//   - each path is stat'ed first (the re-listing): it must still exist, be a
//     regular file reached without any symbolic link, and be older than the
//     guard;
//   - only then is the table re-loaded from the catalog and its referenced
//     set built (every snapshot's manifest list, manifests, data and delete
//     files, statistics, the metadata log, the current metadata and
//     version-hint), so a file committed in between is referenced and
//     survives.
//
// Then it purges the quarantine runs of spec.PurgeRuns (purgeQuarantine).
// It never deletes a path, nor a quarantine run, that the plan did not list.
func Remove(ctx context.Context, cat table.CatalogIO, tbl *table.Table, spec Spec) (store.Result, error) {
	res := store.Result{MetadataLocation: tbl.MetadataLocation()}
	if err := refuseRemoval(tbl, spec); err != nil {
		return res, err
	}
	rm, err := openRemoval(ctx, tbl, spec, &res)
	if err != nil {
		return res, err
	}
	// Rule 1: the listing (here: a fresh stat of every planned path) comes
	// before the referenced set.
	relisted, err := rm.relist(ctx)
	if err != nil {
		return res, err
	}
	cands, err := rm.stillCandidates(ctx, relisted)
	if err != nil {
		return res, err
	}
	if len(cands) == 0 && len(spec.PurgeRuns) == 0 {
		res.NoOp, res.Note = true, "no planned orphan is still deletable"
		return res, nil
	}
	if spec.Recheck != nil {
		if cands, err = rm.recheck(ctx, cands); err != nil {
			return res, err
		}
		// A planned quarantine run is held to the plan's rules by the
		// purge itself (its manifest as planned, due, no problem, no
		// original referenced), with the reason for each run kept.
		if len(cands) == 0 && len(spec.PurgeRuns) == 0 {
			slices.Sort(res.Skipped)
			res.NoOp, res.Note = true, "no planned orphan is still deletable"
			return res, nil
		}
	}
	fresh, doomed, err := rm.unreferenced(ctx, cat, cands)
	if err != nil {
		return res, err
	}
	if len(doomed) > 0 || len(spec.PurgeRuns) > 0 {
		if doomed, err = rm.withoutForeign(ctx, cat, doomed); err != nil {
			return res, err
		}
	}
	rm.removeFiles(ctx, fresh, doomed)
	return res, nil
}

// refuseRemoval is the sweep's guards on the table and the spec, before
// anything is read: gc enabled, the age floor, a clock.
func refuseRemoval(tbl *table.Table, spec Spec) error {
	if !store.GCEnabled(tbl.Properties()) {
		return fmt.Errorf("%w: gc.enabled=false: the table's files may be shared with other tables", store.ErrRefused)
	}
	if spec.OlderThan < minAge {
		return fmt.Errorf("%w: older_than %s is below the %s floor", store.ErrRefused, spec.OlderThan, minAge)
	}
	if spec.Now.IsZero() {
		return fmt.Errorf("%w: no clock given for the age guard", store.ErrRefused)
	}
	return nil
}

// removal is one Remove in progress: the table, its sweep roots and the
// storage each is reached with.
type removal struct {
	tbl    *table.Table
	spec   Spec
	norm   func(string) string
	roots  []string
	locKey string              // the table location's root
	fs     iceio.IO            // the table's storage
	ios    map[string]iceio.IO // each root's storage, as the plan listed it
	res    *store.Result
}

// cand is a planned path still there and old enough.
type cand struct {
	path string
	size int64
	root string
}

// openRemoval checks the sweep's roots (each allowed) and opens the
// storage of each with the storage the plan listed it with.
func openRemoval(ctx context.Context, tbl *table.Table, spec Spec, res *store.Result) (*removal, error) {
	norm := orphanNorm(spec.EqualSchemes, spec.EqualAuthorities)
	roots := sweepRoots(tbl.Location(), tbl.Properties(), norm)
	if why := rootProblem(roots, allowedRoots(spec.AllowStorageRoots, norm)); why != "" {
		return nil, fmt.Errorf("%w: %s (nothing deleted)", store.ErrRefused, why)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table storage: %w", err)
	}
	meter.BindWalk(ctx, fs) // the quarantine's listing and purge, counted like the rest
	rm := &removal{tbl: tbl, spec: spec, norm: norm, roots: roots, locKey: rootKey(tbl.Location(), norm), fs: fs, ios: map[string]iceio.IO{}, res: res}
	for _, r := range roots {
		f, err := rootStorage(ctx, fs, rm.locKey, spec.StorageProps, r)
		if err != nil {
			return nil, fmt.Errorf("%w (nothing deleted)", err)
		}
		rm.ios[r] = f
	}
	return rm, nil
}

func (rm *removal) quarantining() bool { return rm.spec.Quarantine || rm.spec.QuarantineFor > 0 }

// relist lists, on S3 and with many planned paths, each root once: a page
// per 1,000 objects (the apply-time Recheck lists the roots anyway), not
// a request per planned path. The planned paths found in it, with their
// size and time, are what a stat would say. A few paths are stat'ed one by
// one (stillCandidates), cheaper than listing a large table; so is a root
// whose store cannot be listed this way (not in the map).
func (rm *removal) relist(ctx context.Context) (map[string]map[string]objlist.Object, error) {
	planned := map[string]bool{}
	for _, p := range rm.spec.Paths {
		planned[rm.norm(p)] = true
	}
	relisted := map[string]map[string]objlist.Object{}
	for _, r := range rm.roots {
		if len(rm.spec.Paths) < relistAbove {
			break
		}
		found := map[string]objlist.Object{}
		handled, err := objlist.List(ctx, rm.ios[r], r, objlist.Settings{}, func(o objlist.Object) error {
			if k := rm.norm(o.Loc); planned[k] {
				found[k] = o
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("orphan re-listing (nothing deleted): %w", err)
		}
		if handled {
			relisted[r] = found
		}
	}
	return relisted, nil
}

// stillCandidates are the planned paths that are still there, inside a
// root and outside any staging directory, older than older_than, and (when
// quarantining) on the table location's storage; each other is reported
// skipped with its reason.
func (rm *removal) stillCandidates(ctx context.Context, relisted map[string]map[string]objlist.Object) ([]cand, error) {
	cutoff := rm.spec.Now.Add(-rm.spec.OlderThan)
	rule := newStagingRule(rm.tbl.Metadata(), rm.norm)
	res := rm.res
	var cands []cand
	for _, p := range rm.spec.Paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("orphan re-check interrupted (nothing deleted): %w", err)
		}
		root := rootOf(rm.roots, p, rm.norm)
		if root == "" {
			res.Skipped = append(res.Skipped, p+": outside the table's locations")
			continue
		}
		if d := rule.stagingDir(rm.norm(p)); d != "" {
			// A plan of an older icewright may list it; the listing's rule
			// holds here too.
			res.Skipped = append(res.Skipped, p+": inside "+d+", another engine's staging directory, never swept")
			continue
		}
		var (
			size  int64
			mtime time.Time
			why   string
		)
		if found, ok := relisted[root]; ok {
			o, there := found[rm.norm(p)]
			size, mtime = o.Size, o.ModTime
			if !there {
				why = "no longer exists"
			}
		} else {
			size, mtime, why = statCandidate(rm.ios[root], root, p)
		}
		if why != "" {
			res.Skipped = append(res.Skipped, p+": "+why)
			continue
		}
		if !mtime.Before(cutoff) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: modified %s, newer than older_than", p, mtime.UTC().Format(time.RFC3339)))
			continue
		}
		if rm.quarantining() && !sameStorage(root, rm.locKey) {
			// A move stays within one storage (quarantineFiles); the run
			// lives under the table location.
			res.Skipped = append(res.Skipped, p+": on other storage than the table location; quarantine cannot move it there, kept")
			continue
		}
		cands = append(cands, cand{p, size, root})
	}
	return cands, nil
}

// recheck holds the candidates to every rule of the plan, on a listing
// and referenced set made now (§5.5 rules 1-8): a refusal refuses it all,
// purges included; a candidate the scan made now does not propose is
// kept.
func (rm *removal) recheck(ctx context.Context, cands []cand) ([]cand, error) {
	now, err := rm.spec.Recheck(ctx, rm.tbl)
	if err != nil {
		return nil, fmt.Errorf("apply-time re-check of the sweep (nothing deleted): %w", err)
	}
	allowed := map[string]bool{}
	for _, p := range now.Paths {
		allowed[rm.norm(p)] = true
	}
	return slices.DeleteFunc(cands, func(c cand) bool {
		if allowed[rm.norm(c.path)] {
			return false
		}
		rm.res.Skipped = append(rm.res.Skipped, c.path+": not an orphan by the plan's rules at apply time (the scan made now does not propose it)")
		return true
	}), nil
}

// unreferenced re-loads the table (the same table, gc still enabled) and
// keeps the candidates its metadata does not reference now: the files to
// delete, with the table as re-loaded.
func (rm *removal) unreferenced(ctx context.Context, cat table.CatalogIO, cands []cand) (*table.Table, []fileRef, error) {
	fresh, err := cat.LoadTable(ctx, rm.tbl.Identifier())
	if err != nil {
		return nil, nil, fmt.Errorf("re-load table for the referenced set (nothing deleted): %w", err)
	}
	fm := fresh.Metadata()
	if fm.TableUUID() != rm.tbl.Metadata().TableUUID() {
		return nil, nil, fmt.Errorf("%w: table UUID changed; nothing deleted", store.ErrRefused)
	}
	if !store.GCEnabled(fm.Properties()) {
		return nil, nil, fmt.Errorf("%w: gc.enabled=false", store.ErrRefused)
	}
	// Only the candidates' membership matters, so the referenced files are
	// streamed past the (small) candidate set instead of being collected:
	// memory stays bounded by the plan, not by the table. DELETED manifest
	// entries count as references here (withDeleted), erring toward keeping.
	refd := map[string]bool{}
	for _, c := range cands {
		refd[rm.norm(c.path)] = false
	}
	if len(refd) > 0 {
		if err := markReferenced(ctx, rm.fs, fresh, refd, rm.norm, orphanLiteral(rm.spec.EqualSchemes, rm.spec.EqualAuthorities)); err != nil {
			return nil, nil, fmt.Errorf("build referenced set (nothing deleted): %w", err)
		}
	}
	var doomed []fileRef
	for _, c := range cands {
		if refd[rm.norm(c.path)] {
			rm.res.Skipped = append(rm.res.Skipped, c.path+": referenced by the table now")
			continue
		}
		doomed = append(doomed, fileRef{path: c.path, size: c.size})
	}
	slices.Sort(rm.res.Skipped)
	return fresh, doomed, nil
}

// withoutForeign is rule 6 at apply time, right before anything is
// deleted, by the plan's rules: a table created (or given a write path)
// inside the sweep since the plan owns files that look orphaned to us; a
// file another table references is kept; a table that could hold files
// here and cannot be read refuses it all.
func (rm *removal) withoutForeign(ctx context.Context, cat table.CatalogIO, doomed []fileRef) ([]fileRef, error) {
	spec, norm, roots := rm.spec, rm.norm, rm.roots
	resolved, why := resolveRoots(roots, norm)
	if why != "" {
		return nil, fmt.Errorf("%w: %s (nothing deleted)", store.ErrRefused, why)
	}
	ts, self, err := tablesAtApply(ctx, cat, rm.tbl, spec)
	if err != nil {
		return nil, fmt.Errorf("%w: could not check other tables for files inside the sweep (nothing deleted): %v", store.ErrRefused, err)
	}
	if nested := ts.overlapping(self, roots, resolved, norm, normID(spec.EqualSchemes, spec.EqualAuthorities)); len(nested) > 0 {
		return nil, fmt.Errorf("%w: %s (nothing deleted)", store.ErrRefused, diff.OverlapRefusal(nested))
	}
	if err := ts.ReadReferences(ctx, self); err != nil {
		return nil, fmt.Errorf("%w: could not read other tables' references (nothing deleted): %v", store.ErrRefused, err)
	}
	if un := ts.Unreadable(self, roots); len(un) > 0 {
		return nil, fmt.Errorf("%w: %s (nothing deleted)", store.ErrRefused, UnreadableRefusal(un))
	}
	foreign := ts.foreignUnder(self, roots, resolved, norm, len(spec.EqualSchemes)+len(spec.EqualAuthorities) > 0)
	doomed = slices.DeleteFunc(doomed, func(f fileRef) bool {
		owner, ok := foreign[norm(f.path)]
		if ok {
			rm.res.Skipped = append(rm.res.Skipped, f.path+": referenced by "+owner+", kept")
		}
		return ok
	})
	slices.Sort(rm.res.Skipped)
	return doomed, nil
}

// removeFiles deletes (or quarantines) doomed, then purges the quarantine
// runs the plan listed, and says in res what was done.
func (rm *removal) removeFiles(ctx context.Context, fresh *table.Table, doomed []fileRef) {
	spec, res := rm.spec, rm.res
	// The store of each root deletes in batches (objdel): a root is
	// reached with the storage the plan listed it with, a quarantine
	// run's file with the table location's.
	del := deleter{ctx: ctx, set: spec.deleteSettings(), progress: spec.Progress, open: func(root string) (objdel.Store, error) {
		if spec.remove != nil {
			return objdel.OneByOne(spec.remove), nil
		}
		f := rm.ios[root]
		if f == nil {
			f = rm.fs
		}
		return objdel.ForIO(ctx, f, spec.StorageProps, root)
	}}
	if rm.quarantining() {
		res.Note = quarantineFiles(ctx, rm.fs, fresh, rm.roots, doomed, spec, del, res)
	} else {
		del.run(doomed, func(f fileRef) string { return rootOf(rm.roots, f.path, rm.norm) }, nil, func(f fileRef) {
			res.FilesDeleted++
			res.BytesFreed += max(f.size, 0)
		}, func(f fileRef, err error, started bool) {
			deleteFailure(f, err, started, res)
		})
	}
	// Only the runs the plan listed; a run that became due since waits for
	// the plan that shows it.
	var purged int
	if len(spec.PurgeRuns) > 0 {
		pr := purgeQuarantine(ctx, rm.fs, fresh, spec.Now, spec.PurgeRuns, del, orphanNorm(spec.EqualSchemes, spec.EqualAuthorities), orphanLiteral(spec.EqualSchemes, spec.EqualAuthorities))
		if note := pr.note(); note != "" {
			res.Note = strings.TrimPrefix(res.Note+"; "+note, "; ")
		}
		purged = len(pr.Runs)
		res.FilesDeleted += pr.Files
		res.BytesFreed += pr.Bytes
		res.DeleteErrors = append(res.DeleteErrors, pr.Errors...)
	}
	if len(doomed) == 0 && purged == 0 && len(res.DeleteErrors) == 0 {
		res.NoOp = true
		res.Note = strings.TrimPrefix(res.Note+"; no planned orphan or quarantine run is still deletable", "; ")
	}
	slices.Sort(res.DeleteErrors)
}

// note is the purge's line in the results.
func (pr purgeResult) note() string {
	var parts []string
	if len(pr.Runs) > 0 {
		parts = append(parts, fmt.Sprintf("purged quarantine runs %s (%d files, %d bytes)", strings.Join(pr.Runs, ", "), pr.Files, pr.Bytes))
	}
	if len(pr.Kept) > 0 {
		parts = append(parts, "quarantine kept: "+strings.Join(pr.Kept, "; "))
	}
	return strings.Join(parts, "; ")
}

// The defaults of Spec.BatchSize and Spec.DeleteConcurrency for the moves
// and single deletes this package runs itself (runBatched, moveObjects).
const (
	defaultBatch       = 1000
	defaultConcurrency = 8
)

// runBatched runs fn over files in batches of batch (default 1,000), each
// with at most conc (default 8) at once. A failure is handed to failed and
// the rest go on. A cancelled context stops it at a batch boundary (an
// interrupt lets the batch under way finish); a store judged unresponsive
// (bound.Stop) before the next file, since its requests would only be
// refused. Each file left is handed to failed with started false. ok runs
// for each success; ok and failed are serialised.
func runBatched(ctx context.Context, files []fileRef, conc, batch int, progress store.Progress, fn func(fileRef) error, ok func(fileRef), failed func(f fileRef, err error, started bool)) {
	if conc <= 0 {
		conc = defaultConcurrency
	}
	if batch <= 0 {
		batch = defaultBatch
	}
	total := int64(len(files))
	progress.Report(0, total, "files")
	var (
		mu   sync.Mutex
		done int64
	)
	for start := 0; start < len(files); start += batch {
		part := files[start:min(start+batch, len(files))]
		var wg sync.WaitGroup
		sem := make(chan struct{}, conc)
		stop := bound.Stop(ctx)
		for i, f := range part {
			sem <- struct{}{}
			if i > 0 {
				stop = bound.BreakerOf(ctx).Err()
			}
			if stop != nil {
				mu.Lock()
				for _, f := range files[start+i:] {
					failed(f, stop, false)
				}
				mu.Unlock()
				break
			}
			wg.Add(1)
			go func(f fileRef) {
				defer wg.Done()
				defer func() { <-sem }()
				err := fn(f)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && !store.IsNotExist(err) {
					failed(f, err, true)
					return
				}
				ok(f)
				done++
				progress.Report(done, total, "files")
			}(f)
		}
		wg.Wait()
		if stop != nil {
			break
		}
	}
}

// deleter deletes files in batches through the store of each root
// (objdel.Run), with the run's pacing.
type deleter struct {
	ctx      context.Context
	set      objdel.Settings
	progress store.Progress
	open     func(root string) (objdel.Store, error)
}

func (s Spec) deleteSettings() objdel.Settings {
	return objdel.Settings{BatchSize: s.BatchSize, Concurrency: s.DeleteConcurrency, Cooldown: s.Cooldown}
}

// run deletes files, grouped by rootOf (one store each), in their order.
// check, when set, runs for each file right before its batch is sent and
// may keep it (false: not sent, the caller accounts for it). ok gets each
// file gone; failed each one not deleted, with started false when its
// delete was never sent (it is still in place). ok, failed and progress
// are serialised; check may run concurrently.
func (d deleter) run(files []fileRef, rootOf func(fileRef) string, check func(fileRef) bool, ok func(fileRef), failed func(f fileRef, err error, started bool)) {
	total := int64(len(files))
	d.progress.Report(0, total, "files")
	var done int64
	locs := make([]string, len(files))
	for i, f := range files {
		locs[i] = f.path
	}
	_ = objdel.RunGrouped(d.ctx, locs, func(i int) string { return rootOf(files[i]) }, d.open, d.set, objdel.Hooks{
		Check: func(i int) (string, bool) {
			if check != nil && !check(files[i]) {
				return "", false
			}
			return locs[i], true
		},
		Done: func(i int, err error) {
			switch {
			case err == nil || store.IsNotExist(err):
				ok(files[i])
				done++
				d.progress.Report(done, total, "files")
			case errors.Is(err, objdel.ErrNotSent):
				failed(files[i], err, false)
			default:
				failed(files[i], err, true)
			}
		},
		Left: func(i int, err error) { failed(files[i], err, false) },
	})
}

// removeOne deletes one file of root's store, outside any batch (a
// quarantine run's manifest, once its files are gone).
func (d deleter) removeOne(root, p string) error {
	st, err := d.open(root)
	if err != nil {
		return err
	}
	return st.Delete(d.ctx, []string{p})[0]
}

// deleteFailure is a failed orphan delete's line: where the file is.
func deleteFailure(f fileRef, err error, started bool, res *store.Result) {
	switch {
	case !started:
		res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not deleted, still in place: not started: %v", f.path, err))
	case bound.Unanswered(err):
		res.FilesPlaceUnknown++
		res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: place unknown: its delete got no answer, it may be gone or still in place: %v", f.path, err))
	default:
		res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not deleted, still in place: %v", f.path, err))
	}
}

// tablesAtApply is every table the run can see, from a fresh listing (a
// table may have been created since the plan), and tbl's key among them.
func tablesAtApply(ctx context.Context, cat table.CatalogIO, tbl *table.Table, spec Spec) (*Tables, string, error) {
	if spec.OtherTables != nil {
		if spec.Address == "" {
			return nil, "", errors.New("the table's address is not known")
		}
		ts, err := spec.OtherTables(ctx)
		return ts, spec.Address, err
	}
	c, ok := cat.(catalog.Catalog)
	if !ok {
		return nil, "", fmt.Errorf("catalog %T cannot list its tables", cat)
	}
	locs, err := catalogTableLocations(ctx, c)
	if err != nil {
		return nil, "", err
	}
	return NewTables(locs), strings.Join(tbl.Identifier(), "."), nil
}

// catalogTableLocations reads every table of one catalog (namespaces walked
// recursively; ReadTable), keyed by namespace.name; a table that cannot be
// loaded is Unreadable.
func catalogTableLocations(ctx context.Context, cat catalog.Catalog) (map[string]TableLocation, error) {
	out := map[string]TableLocation{}
	err := catalogs.Walk(ctx, cat, func(ident table.Identifier) error {
		t, err := cat.LoadTable(ctx, ident)
		switch {
		case errors.Is(err, catalog.ErrNoSuchTable):
			// dropped since it was listed
		case err != nil:
			out[strings.Join(ident, ".")] = TableLocation{Unreadable: fmt.Sprintf("load: %v", err)}
		default:
			out[strings.Join(ident, ".")] = ReadTable(ctx, t, reach.DecodeVerified)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rootOf returns the root p lies strictly inside, or "" (p and roots
// normalised with the same norm).
func rootOf(roots []string, p string, norm func(string) string) string {
	n := norm(p)
	for _, r := range roots {
		if strings.HasPrefix(n, r+"/") && len(n) > len(r)+1 {
			return r
		}
	}
	return ""
}

// plainRootOf is rootOf with the plain path key, store.NormPath, without a
// policy's maps (quarantine bookkeeping).
func plainRootOf(roots []string, p string) string {
	return rootOf(roots, p, store.NormPath)
}

// statCandidate reports a candidate's size and mtime, or why it must not be
// deleted. Local files are checked with Lstat on every path component below
// the root, so a symbolic link (to a file or a directory) is never followed.
func statCandidate(fs iceio.IO, root, p string) (int64, time.Time, string) {
	if local, ok := store.LocalPath(p); ok {
		rootLocal, _ := store.LocalPath(root)
		rel, err := filepath.Rel(rootLocal, local)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return 0, time.Time{}, "outside the table's locations"
		}
		cur := rootLocal
		parts := strings.Split(rel, string(filepath.Separator))
		for i, part := range parts {
			cur = filepath.Join(cur, part)
			st, err := os.Lstat(cur)
			if err != nil {
				if errors.Is(err, iofs.ErrNotExist) {
					return 0, time.Time{}, "no longer exists"
				}
				return 0, time.Time{}, "stat: " + err.Error()
			}
			if st.Mode()&iofs.ModeSymlink != 0 {
				return 0, time.Time{}, "symbolic link, not followed"
			}
			if i == len(parts)-1 {
				if !st.Mode().IsRegular() {
					return 0, time.Time{}, "not a regular file"
				}
				return st.Size(), st.ModTime(), ""
			}
		}
		return 0, time.Time{}, "empty path"
	}
	f, err := fs.Open(p)
	if err != nil {
		if store.IsNotExist(err) {
			return 0, time.Time{}, "no longer exists"
		}
		return 0, time.Time{}, "open: " + err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, time.Time{}, "stat: " + err.Error()
	}
	return st.Size(), st.ModTime(), ""
}

// fileRef is one file the sweep deletes or moves.
type fileRef struct {
	path string // as written in the metadata
	size int64  // -1 when the metadata does not say
}
