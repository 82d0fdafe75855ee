package orphans

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/meter"
	"github.com/icewright/icewright/providers/internal/objlist"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// QuarantineDir is where a quarantining apply moves orphans (issue 5); the
// listing skips it so quarantined files are never counted twice.
const QuarantineDir = ".icewright-quarantine"

// ownDir is a directory of icewright's own under a table's location, never
// listed by the sweep: the quarantine and the leases (store.LockDir).
func ownDir(name string) bool { return name == QuarantineDir || name == store.LockDir }

// maxMissingReported bounds OrphanScan.MissingReferenced (the count is exact).
const maxMissingReported = 20

// maxUnreferenced bounds the unreferenced files (and the prefix-mismatch
// index) a scan holds. A healthy table's orphans are failed writes, far
// fewer; beyond this the scan refuses rather than grow without bound.
const maxUnreferenced = 1_000_000

// Env is what a scan needs of the session that runs it.
type Env struct {
	// Reload loads the table afresh from its catalog: the referenced set
	// is built from metadata loaded after the listing (rule 2).
	Reload func(ctx context.Context) (*table.Table, error)
	// Storage are the catalog block's properties: the storage settings of
	// roots outside the table location's storage (rootStorage).
	Storage map[string]string
	// OtherTables is every table the run can see (every table of every
	// configured catalog, and those under other catalog names in a SQL
	// catalog's database) with its location, write paths and the files it
	// references outside them (rule 6), keyed by address, read once per run.
	OtherTables func(ctx context.Context) (*Tables, error)
	// SpillLimit is how many listed files, and how many references, the
	// scan holds in memory before it sorts them out to disk; 0 is
	// reach.DefaultSpillLimit (tests force spilling with a small one).
	SpillLimit int
	// Ride, when set, rides on the reference walk.
	Ride *Ride

	// afterListing runs after storage was listed and before the table is
	// reloaded to build the referenced set: tests act there, where races
	// happen.
	afterListing func()
}

func (e Env) spillLimit() int {
	if e.SpillLimit > 0 {
		return e.SpillLimit
	}
	return reach.DefaultSpillLimit
}

// Ride is what else the scan's reference walk feeds, so that a plan reads
// each manifest once: the observation's aggregate of the current snapshot
// and its expiry index. The scan says what it fed: Walked is false when it
// refused before walking; Aggregated is false when AggregateSnapshot is no
// longer in the metadata it walked (a concurrent expiry).
type Ride struct {
	Aggregate         reach.Aggregate
	AggregateSnapshot int64
	Consumers         []reach.Consumer

	Walked     bool // the reference walk ran, feeding Consumers
	Aggregated bool // ... and Aggregate
}

// listedFile is one file of the storage listing.
type listedFile struct {
	key   string // normalised path
	path  string // as listed, usable with the table's IO
	size  int64
	mtime int64
}

// Scan compares the table's storage with the files its metadata references
// (docs/design.md §5.5 rules 1-3, 6, 8). Storage is listed first; the table
// is then reloaded from its catalog and the referenced set built from that
// newer metadata, so a file committed while we listed is in both and is
// kept. Policy decisions (age guard, ratio, gc.enabled) are diff's.
func Scan(ctx context.Context, env Env, pol *config.Effective, tbl *table.Table) (*diff.OrphanScan, error) {
	norm := orphanNorm(pol.OrphanFiles.EqualSchemes.Value, pol.OrphanFiles.EqualAuthorities.Value)
	scan := &diff.OrphanScan{
		Candidates: []diff.FileInfo{},
		NonIceberg: []diff.FileInfo{},
		Categories: map[string]int64{},
	}
	roots := sweepRoots(tbl.Location(), tbl.Properties(), norm)
	scan.Roots = roots
	fsys, ios, err := scanStorage(ctx, env, pol, tbl, roots, norm, scan)
	if err != nil || scan.Refusal != "" {
		return refusedOr(scan, err)
	}

	// Rule 1: the listing comes first.
	ioFor := func(root string) (iceio.IO, error) { return ios[root], nil }
	rule := newStagingRule(tbl.Metadata(), norm)
	var staged stagingReport
	// The LIST requests the listing sends, counted in the action's meter
	// (apply) or a meter of its own (a plan): apply's re-listing and
	// re-check send as many (the estimate, diff.OrphanScan.ListRequests).
	m, lctx := meter.Of(ctx), ctx
	if m == nil {
		m = meter.New()
		lctx = meter.With(ctx, m)
	}
	listsBefore := m.Counts().Requests[meter.List]
	listing, hints, symlinks, err := listRoots(lctx, fsys, ioFor, roots, norm, rule, &staged, env.spillLimit())
	if err != nil {
		return nil, err
	}
	scan.ListRequests = m.Counts().Requests[meter.List] - listsBefore
	defer listing.Close()
	scan.Symlinks = symlinks
	scan.Staging = staged.result()
	scan.ListedFiles = listing.Len()
	if env.afterListing != nil {
		env.afterListing()
	}

	// Rule 2: the referenced set, from metadata loaded after the listing.
	fresh, err := env.Reload(ctx)
	if err != nil {
		return nil, fmt.Errorf("reload after listing: %w", err)
	}
	if fresh.Metadata().TableUUID() != tbl.Metadata().TableUUID() {
		scan.Refusal = "the table was dropped and recreated during the scan"
		return scan, nil
	}
	refs := reach.NewSortedRefSet(env.spillLimit())
	defer refs.Close()
	// The literal names of references that name two local files
	// (orphanLiteral): kept, never proposed, not required in the listing.
	literals := reach.NewSorter(env.spillLimit())
	defer literals.Close()
	scan.Reads = &diff.ManifestReads{}
	relative, err := addReferenced(ctx, env, pol, tbl, fresh, hints, norm, rule, refs, literals, scan.Reads)
	if err != nil {
		return nil, err
	}
	// Sealing passes over every distinct reference once; the prefix
	// mismatch index is collected on the way.
	mm := newMismatchIndex(roots)
	if err := refs.Seal(mm.visit); err != nil {
		return nil, fmt.Errorf("referenced set: %w", err)
	}
	refuseUnmatchable(scan, relative, fresh, roots, norm)
	scan.Referenced = refs.Len()
	scan.Categories = refs.Categories()

	excl, err := newExcluder(norm(tbl.Location()), pol.OrphanFiles.Exclude.Value, flinkJobIDs(fresh.Metadata()))
	if err != nil {
		return nil, err
	}
	if err := mergeListing(scan, listing, refs, literals, roots, excl, mm.sorted()); err != nil {
		return nil, err
	}
	keepOtherTables(ctx, env, pol, scan, roots, norm)
	scanQuarantines(scan, fsys, tbl, pol, rule, norm)
	return scan, nil
}

// refusedOr is the scan when it was refused, else the error.
func refusedOr(scan *diff.OrphanScan, err error) (*diff.OrphanScan, error) {
	if err != nil {
		return nil, err
	}
	return scan, nil
}

// scanStorage checks the sweep's roots (each allowed) and opens the table's
// storage and each root's; a root refused sets scan.Refusal.
func scanStorage(ctx context.Context, env Env, pol *config.Effective, tbl *table.Table, roots []string, norm func(string) string, scan *diff.OrphanScan) (iceio.IO, map[string]iceio.IO, error) {
	if why := rootProblem(roots, allowedRoots(pol.OrphanFiles.AllowStorageRoots.Value, norm)); why != "" {
		scan.Refusal = why
		return nil, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open storage: %w", err)
	}
	meter.BindWalk(ctx, fsys) // the quarantine's listing, counted like the rest
	locKey := rootKey(tbl.Location(), norm)
	ios := map[string]iceio.IO{}
	for _, r := range roots {
		f, err := rootStorage(ctx, fsys, locKey, env.Storage, r)
		if errors.Is(err, store.ErrRefused) {
			scan.Refusal = strings.TrimPrefix(err.Error(), store.ErrRefused.Error()+": ")
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		ios[r] = f
	}
	return fsys, ios, nil
}

// addReferenced adds every file the table references (fresh, read after
// the listing) to refs, and the literal names of those that name two
// local files to literals. It returns the first relative path referenced
// ("" when none).
func addReferenced(ctx context.Context, env Env, pol *config.Effective, tbl, fresh *table.Table, hints []string, norm func(string) string, rule stagingRule, refs *reach.SortedRefSet, literals *reach.Sorter, reads *diff.ManifestReads) (string, error) {
	literal := orphanLiteral(pol.OrphanFiles.EqualSchemes.Value, pol.OrphanFiles.EqualAuthorities.Value)
	var relative string
	add := func(p, cat string, required bool) error {
		if !isAbsoluteLocation(p) && relative == "" {
			relative = p
		}
		k := norm(p)
		// A reference inside a staging directory is kept like every
		// reference, but cannot be required in a listing that does not
		// enter the directory.
		if err := refs.Add(k, cat, required && rule.stagingDir(k) == ""); err != nil {
			return err
		}
		if lit, ok := literal(p); ok {
			return literals.Add(reach.Rec{Key: lit})
		}
		return nil
	}
	err := buildReferenced(ctx, tbl.Metadata(), tbl.MetadataLocation(), fresh, hints, norm, add, env.Ride, reads)
	return relative, err
}

// refuseUnmatchable refuses a sweep whose references cannot be matched
// with the listing: a relative path, or a current metadata file outside
// every root.
func refuseUnmatchable(scan *diff.OrphanScan, relative string, fresh *table.Table, roots []string, norm func(string) string) {
	if relative != "" {
		// A relative path cannot be compared with a listing, and the file
		// it names would look orphaned.
		scan.Refusal = fmt.Sprintf("the metadata references a relative path (%s); it cannot be matched with storage", relative)
	}
	if ml := norm(fresh.MetadataLocation()); !underAny(ml, roots) && scan.Refusal == "" {
		// The table's own current metadata is not where its location and
		// write paths say its files are (iceberg-go, for one, escapes a bare
		// location with non-ASCII characters when it names files, and
		// writes them under the escaped name): the sweep would look in the
		// wrong place, and the listing's complement would mean nothing.
		scan.Refusal = fmt.Sprintf("the current metadata file %s is outside every sweep root (%s): the table location and write paths do not say where the table's files are", fresh.MetadataLocation(), strings.Join(roots, ", "))
	}
}

// keepOtherTables is rule 6: other tables' files under the sweep, from
// the tables the run can see (the session's: names listed afresh, each
// table read once per session). If a catalog cannot be listed the answer
// is unknown, and the sweep is refused; so is it when a table that could
// hold files here could not be read. A file another table references is
// kept.
func keepOtherTables(ctx context.Context, env Env, pol *config.Effective, scan *diff.OrphanScan, roots []string, norm func(string) string) {
	resolved, why := resolveRoots(roots, norm)
	if why != "" {
		scan.Refusal = cmp.Or(scan.Refusal, why)
		resolved = make([]string, len(roots))
	}
	ts, err := env.OtherTables(ctx)
	if err != nil {
		scan.Refusal = cmp.Or(scan.Refusal, fmt.Sprintf("could not check other tables for files inside the sweep: %v", err))
		ts = NewTables(nil)
	}
	scan.NestedTables = ts.overlapping(pol.Address, roots, resolved, norm, normID(pol.OrphanFiles.EqualSchemes.Value, pol.OrphanFiles.EqualAuthorities.Value))
	if len(scan.Candidates)+len(scan.NonIceberg) > 0 {
		// Something to delete: other tables' references are read (once
		// per run) and what they reference is kept.
		if err := ts.ReadReferences(ctx, pol.Address); err != nil {
			scan.Refusal = cmp.Or(scan.Refusal, fmt.Sprintf("could not read other tables' references: %v", err))
		}
		mapped := len(pol.OrphanFiles.EqualSchemes.Value)+len(pol.OrphanFiles.EqualAuthorities.Value) > 0
		keepForeign(scan, ts.foreignUnder(pol.Address, roots, resolved, norm, mapped), norm)
	}
	if un := ts.Unreadable(pol.Address, roots); len(un) > 0 {
		scan.Refusal = cmp.Or(scan.Refusal, UnreadableRefusal(un))
	}
}

// scanQuarantines reads the runs of earlier quarantining applies, from
// their manifests, so that the plan shows every run it would purge; and,
// when there is something to move, probes that the store takes a write
// in the quarantine, so that a refusal is said in the plan, before any
// move (issue 17).
func scanQuarantines(scan *diff.OrphanScan, fsys iceio.IO, tbl *table.Table, pol *config.Effective, rule stagingRule, norm func(string) string) {
	// A quarantined file is live when its path is a missing reference, or
	// the literal name of one (read as a file: URI, it decodes to it).
	scan.Quarantine = scanQuarantine(fsys, tbl.Location(), tbl.Metadata().TableUUID().String(), func(p string) bool {
		return slices.Contains(scan.MissingReferenced, norm(p)) ||
			strings.HasPrefix(p, "/") && slices.Contains(scan.MissingReferenced, norm("file://"+p))
	}, func(p string) string { return rule.stagingDir(norm(p)) })
	if pol.OrphanFiles.Quarantine.Value > 0 && len(scan.Candidates)+len(scan.NonIceberg) > 0 {
		if err := quarantineProbe(fsys, tbl.Location()); err != nil {
			scan.Refusal = cmp.Or(scan.Refusal, "orphan_files.quarantine: the store refuses writes under "+QuarantineDir+"/, so nothing could be moved there: "+err.Error())
		}
	}
}

// keepForeign takes out of the scan's candidates and non-Iceberg files
// those that another table references (foreign: key by norm -> table), and
// says so in scan.Foreign.
func keepForeign(scan *diff.OrphanScan, foreign map[string]string, norm func(string) string) {
	if len(foreign) == 0 {
		return
	}
	kept := &diff.ForeignKept{}
	tables := map[string]bool{}
	keep := func(f diff.FileInfo) bool {
		owner, ok := foreign[norm(f.Path)]
		if !ok {
			return false
		}
		kept.Files++
		kept.Bytes += max(f.Size, 0)
		tables[owner] = true
		kept.Examples = append(kept.Examples, f.Path)
		return true
	}
	scan.Candidates = slices.DeleteFunc(scan.Candidates, keep)
	scan.NonIceberg = slices.DeleteFunc(scan.NonIceberg, keep)
	if kept.Files == 0 {
		return
	}
	kept.Tables = slices.Sorted(maps.Keys(tables))
	slices.Sort(kept.Examples)
	kept.Examples = kept.Examples[:min(len(kept.Examples), 5)]
	scan.Foreign = kept
}

// buildReferenced adds every file the metadata references: all snapshots'
// files (reach.Walk), every metadata.json in the log plus the current
// one, and version-hint.text when storage has one. Files reached from
// snapshots and metadata versions that were already there before the
// listing (before, beforeLoc) are required to be in it; those of commits
// made since are referenced (kept) but may be absent from the listing.
func buildReferenced(ctx context.Context, before table.Metadata, beforeLoc string, tbl *table.Table, hints []string, norm func(string) string, add func(p, cat string, required bool) error, ride *Ride, reads *diff.ManifestReads) error {
	md := tbl.Metadata()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open storage: %w", err)
	}
	// Files that manifests still list as DELETED entries are kept (never an
	// orphan: a reader of an old snapshot may still want them) but are not
	// required in the listing: once expiry removed the snapshots that used
	// them, they are legitimately gone. Only live entries of snapshots that
	// predate the listing must be in it. The same walk feeds what else rides
	// on it (the plan's aggregate and expiry index).
	w := reach.Spec{
		Meta:      md,
		FS:        fsys,
		Snapshots: reach.AllSnapshots(md),
		Old:       func(id int64) bool { return before.SnapshotByID(id) != nil },
		Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
			// What the walk reads (each list and distinct manifest once):
			// the orphan estimate's reads (diff.OrphanScan.Reads).
			switch f.Category {
			case reach.CategoryManifestList:
				reads.Lists++
				reads.ListBytes += f.Size
			case reach.CategoryManifest:
				reads.Manifests++
				reads.ManifestBytes += f.Size
			}
			return add(f.Path, f.Category, f.Old && !f.Deleted)
		}}},
	}
	if ride != nil {
		// The plan's scan (it rides the plan's observation) decodes with
		// the fast decoder. Apply's re-check (Kind.recheck) has no ride:
		// the referenced set it deletes by is iceberg-go's reading.
		w.Decoder = reach.DecodeFast
		if ride.Aggregate != nil && md.SnapshotByID(ride.AggregateSnapshot) != nil {
			w.Aggregate, w.AggregateSnapshot = ride.Aggregate, ride.AggregateSnapshot
		}
		w.Consumers = append(w.Consumers, ride.Consumers...)
	}
	if err := reach.Walk(ctx, w); err != nil {
		return fmt.Errorf("build referenced set: %w", err)
	}
	if ride != nil {
		ride.Walked = true
		ride.Aggregated = w.Aggregate != nil
	}
	knownMeta := map[string]bool{norm(beforeLoc): true}
	for e := range before.PreviousFiles() {
		knownMeta[norm(e.MetadataFile)] = true
	}
	if err := add(tbl.MetadataLocation(), reach.CategoryMetadata, knownMeta[norm(tbl.MetadataLocation())]); err != nil {
		return err
	}
	for e := range md.PreviousFiles() {
		if err := add(e.MetadataFile, reach.CategoryMetadata, knownMeta[norm(e.MetadataFile)]); err != nil {
			return err
		}
	}
	// version-hint.text sits beside the metadata files (Hadoop tables). It
	// is only referenced when it exists: a catalog table has none, and a
	// missing one must not look like a partial listing. With
	// write.metadata.path set, new metadata goes there while the hint that
	// Hadoop readers open stays in <location>/metadata (and a writer may
	// keep one in the new directory too): each is the table's.
	seen := map[string]bool{}
	for _, dir := range []string{
		strings.TrimSuffix(tbl.MetadataLocation(), path.Base(tbl.MetadataLocation())),
		strings.TrimSuffix(md.Location(), "/") + "/metadata/",
		strings.TrimSuffix(md.Properties()["write.metadata.path"], "/") + "/",
	} {
		if dir == "/" {
			continue
		}
		hint := dir + "version-hint.text"
		if k := norm(hint); !seen[k] && slices.Contains(hints, k) {
			seen[k] = true
			if err := add(hint, reach.CategoryVersionHint, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func underRoot(key, root string) bool {
	return key == root || strings.HasPrefix(key, root+"/")
}

func underAny(key string, roots []string) bool {
	for _, r := range roots {
		if underRoot(key, r) {
			return true
		}
	}
	return false
}

func isAbsoluteLocation(p string) bool {
	return strings.HasPrefix(p, "/") || strings.Contains(p, "://") || strings.HasPrefix(p, "file:")
}

// A listed file's path as listed (usable with the table's IO) is most
// often its key, or its key without "file://". The listing sorter stores
// the path only when it is neither, so the common case spills one string
// per file, not two.
const (
	auxSameAsKey = ""
	auxLocalPath = "\x00"
)

func listedAux(key, p string) string {
	switch {
	case p == key:
		return auxSameAsKey
	case len(key) == len("file://")+len(p) && strings.HasPrefix(key, "file://") && key[len("file://"):] == p:
		return auxLocalPath
	}
	return p
}

func listedPath(key, aux string) string {
	switch aux {
	case auxSameAsKey:
		return key
	case auxLocalPath:
		return strings.TrimPrefix(key, "file://")
	}
	return aux
}

// listRoots lists every file under the roots and returns them sorted by
// key. Local directories are walked by walkLocal, which does not follow
// symbolic links: a link is reported in symlinks and never becomes a
// candidate, whatever it points to. Object stores are listed through
// iceberg-go's IO (ListableIO).
//
// ioFor, when set, opens the IO for a root on another bucket or store than
// the table location (write.data.path may point elsewhere); nil uses fsys.
//
// The files go into an external sorter (spillLimit records in memory);
// version-hint.text files are also returned by key, so the referenced set
// can tell whether one exists.
func listRoots(ctx context.Context, fsys iceio.IO, ioFor func(root string) (iceio.IO, error), roots []string, norm func(string) string, rule stagingRule, staged *stagingReport, spillLimit int) (_ *reach.Sorter, hints, symlinks []string, err error) {
	out := reach.NewSorter(spillLimit)
	defer func() {
		if err != nil {
			_ = out.Close()
		}
	}()
	l := rootLister{norm: norm, rule: rule, staged: staged, emit: func(p string, size, mtime int64) error {
		k := norm(p)
		if path.Base(k) == "version-hint.text" {
			hints = append(hints, k)
		}
		return out.Add(reach.Rec{Key: k, Aux: listedAux(k, p), N1: size, N2: mtime})
	}}
	for _, root := range roots {
		if strings.HasPrefix(root, "file://") {
			if err := l.listLocal(ctx, root, func(p string) { symlinks = append(symlinks, p) }); err != nil {
				return nil, nil, nil, fmt.Errorf("list %s: %w", root, err)
			}
			continue
		}
		rootFS := fsys
		if ioFor != nil {
			f, err := ioFor(root)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("list %s: %w", root, err)
			}
			rootFS = f
		}
		if err := l.listStore(ctx, rootFS, root); err != nil {
			return nil, nil, nil, fmt.Errorf("list %s: %w", root, err)
		}
	}
	slices.Sort(symlinks)
	return out, hints, symlinks, nil
}

// rootLister lists one root after another into emit, counting what lies
// in staging directories in staged instead.
type rootLister struct {
	norm   func(string) string
	rule   stagingRule
	staged *stagingReport
	emit   func(p string, size, mtime int64) error
}

// listLocal walks a local root (walkLocal: no symbolic link followed, each
// reported to symlink; staging directories not entered).
func (l rootLister) listLocal(ctx context.Context, root string, symlink func(string)) error {
	local, err := keyLocalPath(root)
	if err != nil {
		return err
	}
	return walkLocal(ctx, local, func(f localFile) error {
		return l.emit(f.path, f.size, f.mtime)
	}, symlink, &stagingWalk{
		dir: func(p string) bool {
			if !l.rule.skips(l.norm(p)) {
				return false
			}
			l.staged.dir(p)
			return true
		},
		file: func(_ string, f localFile) { l.staged.file(f.size) },
	})
}

// listStore lists a root on an object store: on S3 fanned out by prefix,
// each page retried, any failed page failing the listing (objlist); else
// through iceberg-go's IO (ListableIO).
func (l rootLister) listStore(ctx context.Context, rootFS iceio.IO, root string) error {
	stagedDirs := map[string]bool{}
	handled, err := objlist.List(ctx, rootFS, root, objlist.Settings{}, func(o objlist.Object) error {
		if strings.Contains(o.Loc, "/"+QuarantineDir+"/") || strings.Contains(o.Loc, "/"+store.LockDir+"/") {
			return nil
		}
		if top := l.rule.stagingDir(l.norm(o.Loc)); top != "" {
			if !stagedDirs[top] {
				stagedDirs[top] = true
				l.staged.dir(top)
			}
			l.staged.file(o.Size)
			return nil
		}
		return l.emit(o.Loc, o.Size, o.ModTime.UnixMilli())
	})
	if err != nil || handled {
		return err
	}
	lio, ok := rootFS.(iceio.ListableIO)
	if !ok {
		return fmt.Errorf("storage %T cannot list", rootFS)
	}
	return lio.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d == nil && errors.Is(err, fs.ErrNotExist) {
				// The root itself is not there: on an object store a
				// prefix with no objects yet. Local storage lists such
				// a root as empty (walkLocal); so does this. Should
				// files be referenced under it, they are missing
				// from the listing and the sweep refuses.
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if ownDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.Contains(p, "/"+QuarantineDir+"/") || strings.Contains(p, "/"+store.LockDir+"/") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		// An object store has no directories to leave unentered: each
		// key is asked whether it lies in one (the same rule).
		if top := l.rule.stagingDir(l.norm(p)); top != "" {
			if top != l.staged.last {
				l.staged.last = top
				l.staged.dir(top)
			}
			l.staged.file(info.Size())
			return nil
		}
		return l.emit(p, info.Size(), info.ModTime().UnixMilli())
	})
}

// mergeListing walks the sorted listing and the sorted referenced keys side
// by side (no map of every path). An error from either stream fails the
// whole scan: a partial referenced set would make live files look orphaned.
//
// literals, when set, holds the literal-name keys of references that name
// two local files (orphanLiteral), sorted: a listed file with such a name
// is the table's under the other reading, so it is kept, never a candidate,
// and counted in OrphanScan.LiteralNamed.
func mergeListing(scan *diff.OrphanScan, listing *reach.Sorter, refs reach.RefSet, literals *reach.Sorter, roots []string, excl *excluder, mismatch []string) error {
	next, stop := iter.Pull2(refs.Keys())
	defer stop()
	ref, req, ok := next()
	literalNamed := func(string) (bool, error) { return false, nil }
	if literals != nil {
		lnext, lstop := iter.Pull2(literals.Sorted())
		defer lstop()
		lit, lerr, lok := lnext()
		literalNamed = func(key string) (bool, error) {
			for lok && lerr == nil && lit.Key < key {
				lit, lerr, lok = lnext()
			}
			if lerr != nil {
				return false, fmt.Errorf("literal names: %w", lerr)
			}
			return lok && lit.Key == key, nil
		}
	}
	missing := func(k string, required bool) {
		if !required || !underAny(k, roots) {
			return // committed after the listing, or outside this sweep
		}
		scan.MissingReferencedCount++
		if len(scan.MissingReferenced) < maxMissingReported {
			scan.MissingReferenced = append(scan.MissingReferenced, k)
		}
	}
	lastKey, first := "", true
	for rec, err := range listing.Sorted() {
		if err != nil {
			return fmt.Errorf("listing: %w", err)
		}
		if !first && rec.Key == lastKey {
			continue // the same file listed twice (overlapping roots)
		}
		lastKey, first = rec.Key, false
		f := listedFile{key: rec.Key, path: listedPath(rec.Key, rec.Aux), size: rec.N1, mtime: rec.N2}
		for ok && ref < f.key {
			missing(ref, req)
			ref, req, ok = next()
		}
		if ok && ref == f.key {
			ref, req, ok = next()
			continue
		}
		switch named, err := literalNamed(f.key); {
		case err != nil:
			return err
		case named:
			scan.LiteralNamed++
			if scan.LiteralNamedExample == "" {
				scan.LiteralNamedExample = f.path
			}
			continue
		}
		info := diff.FileInfo{Path: f.path, Size: f.size, MtimeMs: f.mtime}
		if int64(len(scan.Candidates)+len(scan.NonIceberg)) >= maxUnreferenced {
			// Past this many unreferenced files the sweep is misconfigured
			// or the references are broken; keep memory bounded and refuse.
			scan.Refusal = cmp.Or(scan.Refusal, fmt.Sprintf("more than %d unreferenced files under the table: refusing to sweep", maxUnreferenced))
			continue
		}
		switch {
		case excl.excluded(f.key):
			scan.Excluded++
		case hasPathPart(mismatch, f.key):
			scan.PrefixMismatches = append(scan.PrefixMismatches, f.path)
		case !isIcebergFileName(path.Base(f.key)):
			scan.NonIceberg = append(scan.NonIceberg, info)
		default:
			scan.Candidates = append(scan.Candidates, info)
		}
	}
	for ok {
		missing(ref, req)
		ref, req, ok = next()
	}
	if err := refs.Err(); err != nil {
		return fmt.Errorf("referenced set: %w", err)
	}
	return nil
}

// schemeAuthority is "s3://bucket" of "s3://bucket/t/x".
func schemeAuthority(key string) string {
	return strings.TrimSuffix(key, pathPart(key))
}

// pathPart drops scheme and authority: "s3://b/t/x" -> "/t/x".
func pathPart(key string) string {
	_, rest, ok := strings.Cut(key, "://")
	if !ok {
		return key
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "/"
	}
	return rest[i:]
}

// mismatchIndex collects the path parts of referenced files that lie
// outside every root but would be inside one if scheme and authority were
// ignored: a listed file with such a path is most likely the same file
// spelled differently (another bucket alias, s3a vs an unmapped scheme),
// and is reported instead of becoming a candidate.
type mismatchIndex struct {
	roots, rootParts []string
	parts            []string
}

func newMismatchIndex(roots []string) *mismatchIndex {
	m := &mismatchIndex{roots: roots, rootParts: make([]string, len(roots))}
	for i, r := range roots {
		m.rootParts[i] = pathPart(r)
	}
	return m
}

// visit takes one referenced key (Seal's visitor).
func (m *mismatchIndex) visit(k string) error {
	if underAny(k, m.roots) {
		return nil
	}
	if pp := pathPart(k); underAny(pp, m.rootParts) {
		if len(m.parts) >= maxUnreferenced {
			return fmt.Errorf("more than %d referenced files match the sweep only by path: check the table location and equal_schemes/equal_authorities", maxUnreferenced)
		}
		m.parts = append(m.parts, pp)
	}
	return nil
}

func (m *mismatchIndex) sorted() []string {
	slices.Sort(m.parts)
	return m.parts
}

func hasPathPart(sorted []string, key string) bool {
	if len(sorted) == 0 {
		return false
	}
	_, found := slices.BinarySearch(sorted, pathPart(key))
	return found
}

// icebergFileName matches the files Iceberg writers produce: data and delete
// files, manifests and manifest lists, metadata JSON (optionally
// compressed), Puffin statistics and deletion vectors, and version hints.
var icebergFileName = regexp.MustCompile(`(?i)(\.parquet|\.avro|\.orc|\.metadata\.json|\.metadata\.json\.gz|\.puffin|\.stats|^version-hint\.text)$`)

// isIcebergFileName reports whether a base name looks like a file Iceberg
// writes. Anything else (.crc side files, _SUCCESS, README) is reported as
// non-Iceberg and is not an orphan candidate.
func isIcebergFileName(base string) bool {
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
		return false // hidden and marker files (.x.parquet.crc, _SUCCESS)
	}
	return icebergFileName.MatchString(base)
}

// excluder decides which unreferenced files are excluded from the sweep:
// the policy's exclude globs, matched against the path relative to the table
// location ("*" within one level, "**" across levels), and Flink checkpoint
// metadata of jobs named in snapshot summaries (flink.job-id), which live in
// metadata directories and carry the job id in their name.
type excluder struct {
	location string
	globs    []*regexp.Regexp
	jobIDs   []string
}

func newExcluder(location string, globs []string, jobIDs []string) (*excluder, error) {
	e := &excluder{location: strings.TrimSuffix(location, "/"), jobIDs: jobIDs}
	for _, g := range globs {
		re, err := globRegexp(g)
		if err != nil {
			return nil, fmt.Errorf("exclude %q: %w", g, err)
		}
		e.globs = append(e.globs, re)
	}
	return e, nil
}

func (e *excluder) excluded(key string) bool {
	rel, ok := strings.CutPrefix(key, e.location+"/")
	if !ok {
		rel = key
	}
	for _, re := range e.globs {
		if re.MatchString(rel) {
			return true
		}
	}
	if len(e.jobIDs) > 0 && strings.Contains(key, "/metadata/") {
		base := path.Base(key)
		for _, id := range e.jobIDs {
			if strings.Contains(base, id) {
				return true
			}
		}
	}
	return false
}

// globRegexp compiles a glob: "**" any number of levels, "*" and "?" within
// one level. A pattern that names a directory also covers what is below it.
func globRegexp(g string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString("^")
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			sb.WriteString(".*")
			i++
		case c == '*':
			sb.WriteString("[^/]*")
		case c == '?':
			sb.WriteString("[^/]")
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("(/.*)?$")
	return regexp.Compile(sb.String())
}

// flinkJobIDs collects the values of flink.job-id* keys in snapshot
// summaries (as the production design in reference 001 does).
func flinkJobIDs(md table.Metadata) []string {
	var ids []string
	for _, s := range md.Snapshots() {
		if s.Summary == nil {
			continue
		}
		for k, v := range s.Summary.Properties {
			if strings.HasPrefix(k, "flink.job-id") && v != "" {
				ids = append(ids, v)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
