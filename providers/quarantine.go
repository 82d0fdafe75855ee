package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
)

// QuarantineManifestName is the manifest of one quarantine run, beside the
// moved files in <location>/.iceops-quarantine/<run-id>/. Its leading dot
// keeps it apart from the relative paths of the files (an orphan with that
// exact relative path is not quarantined).
const QuarantineManifestName = ".iceops-manifest.json"

// QuarantineManifest records what one apply moved, so that restore can put
// every file back where it was and purge knows when the grace period ends.
type QuarantineManifest struct {
	RunID     string    `json:"run_id"`
	Table     string    `json:"table"` // namespace.name
	TableUUID string    `json:"table_uuid"`
	CreatedAt time.Time `json:"created_at"`
	// PurgeAfter is when a later apply may delete the run; zero when the
	// policy's duration was not known (then it is never purged by iceops).
	PurgeAfter time.Time         `json:"purge_after,omitzero"`
	Files      []QuarantinedFile `json:"files"`
}

// QuarantinedFile is one moved orphan.
type QuarantinedFile struct {
	Original    string    `json:"original"`    // path as listed, where restore puts it back
	Quarantined string    `json:"quarantined"` // where it is now
	Size        int64     `json:"size"`
	Mtime       time.Time `json:"mtime"`
	// Moved is false for a file the manifest announced but the move did
	// not complete (it is still at Original).
	Moved bool `json:"moved"`
}

// quarantineRoot is <location>/.iceops-quarantine.
func quarantineRoot(location string) string {
	return strings.TrimSuffix(location, "/") + "/" + QuarantineDir
}

// NewQuarantineRunID names a run by its start time (sortable, readable in a
// listing); a second run within the same second gets a suffix.
func NewQuarantineRunID(now time.Time) string {
	return now.UTC().Format("20060102T150405Z")
}

// quarantineTarget is where f goes inside the run directory: its path
// relative to the table location, or, for a file under write.data.path or
// write.metadata.path elsewhere, relative to that root under "root-<i>/".
func quarantineTarget(runDir, location string, roots []string, p string) (string, bool) {
	loc := execNormPath(location)
	root := execRootOf(roots, p)
	if root == "" {
		return "", false
	}
	rel := strings.TrimPrefix(execNormPath(p), root+"/")
	if root != loc {
		rel = fmt.Sprintf("root-%d/%s", slices.Index(roots, root), rel)
	}
	if rel == QuarantineManifestName || rel == "" {
		return "", false
	}
	return runDir + "/" + rel, true
}

// quarantineFiles moves files into a new run directory. The manifest is
// written before anything moves (so a crash leaves every moved file
// findable), and again at the end with what actually moved.
func quarantineFiles(ctx context.Context, fs iceio.IO, tbl *table.Table, roots []string, files []execFileRef, spec OrphanSpec, res *ExecResult) string {
	runID := spec.RunID
	if runID == "" {
		runID = NewQuarantineRunID(spec.Now)
	}
	qroot := quarantineRoot(tbl.Location())
	runDir := qroot + "/" + runID
	for i := 2; quarantineExists(fs, runDir+"/"+QuarantineManifestName); i++ {
		runDir = fmt.Sprintf("%s/%s-%d", qroot, runID, i)
	}
	runID = path.Base(runDir)
	man := QuarantineManifest{
		RunID: runID, Table: strings.Join(tbl.Identifier(), "."), TableUUID: tbl.Metadata().TableUUID().String(),
		CreatedAt: spec.Now.UTC(),
	}
	if spec.QuarantineFor > 0 {
		man.PurgeAfter = spec.Now.Add(spec.QuarantineFor).UTC()
	}
	var moving []execFileRef
	for _, f := range files {
		dest, ok := quarantineTarget(runDir, tbl.Location(), roots, f.path)
		if !ok {
			res.Skipped = append(res.Skipped, f.path+": no place for it in the quarantine, kept")
			continue
		}
		_, mtime, _ := execStatCandidate(fs, execRootOf(roots, f.path), f.path)
		man.Files = append(man.Files, QuarantinedFile{Original: f.path, Quarantined: dest, Size: f.size, Mtime: mtime.UTC()})
		moving = append(moving, f)
	}
	if len(moving) == 0 {
		return ""
	}
	manPath := runDir + "/" + QuarantineManifestName
	if err := writeQuarantineManifest(fs, manPath, man); err != nil {
		// Without a manifest the files could not be restored by iceops:
		// move nothing.
		for _, f := range moving {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined: manifest: %v", f.path, err))
		}
		return ""
	}
	moved := map[string]bool{}
	var quarantinedBytes int64
	errs := runBatched(ctx, moving, spec.DeleteConcurrency, spec.BatchSize, spec.Progress, func(f execFileRef) error {
		dest, _ := quarantineTarget(runDir, tbl.Location(), roots, f.path)
		return moveFile(fs, f.path, dest)
	}, func(f execFileRef) {
		moved[f.path] = true
		res.FilesQuarantined++
		// Not BytesFreed: a quarantined file still takes its space until
		// the purge, which counts it then.
		quarantinedBytes += max(f.size, 0)
	})
	for _, e := range errs {
		res.DeleteErrors = append(res.DeleteErrors, e+" (not quarantined)")
	}
	for i := range man.Files {
		man.Files[i].Moved = moved[man.Files[i].Original]
	}
	if err := writeQuarantineManifest(fs, manPath, man); err != nil {
		// The first manifest lists every file (Moved=false); restore checks
		// the quarantined copy exists, so it still works.
		res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: final manifest: %v", manPath, err))
	}
	if res.FilesQuarantined == 0 {
		return ""
	}
	return fmt.Sprintf("quarantined %d files (%d bytes) in run %s", res.FilesQuarantined, quarantinedBytes, runID)
}

func quarantineExists(fs iceio.IO, p string) bool {
	if l, ok := execLocalPath(p); ok {
		_, err := os.Lstat(l)
		return err == nil
	}
	f, err := fs.Open(p)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

func writeQuarantineManifest(fs iceio.IO, p string, m QuarantineManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if l, ok := execLocalPath(p); ok {
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			return err
		}
		tmp := l + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, l)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", fs)
	}
	return wfs.WriteFile(p, b)
}

func readQuarantineManifest(fs iceio.IO, p string) (QuarantineManifest, error) {
	m, _, err := readQuarantineManifestRaw(fs, p)
	return m, err
}

// readQuarantineManifestRaw also returns the manifest's bytes, whose digest
// pins a planned purge to the manifest the reviewer saw.
func readQuarantineManifestRaw(fs iceio.IO, p string) (QuarantineManifest, []byte, error) {
	var m QuarantineManifest
	var b []byte
	var err error
	if l, ok := execLocalPath(p); ok {
		b, err = os.ReadFile(l)
	} else {
		var f iceio.File
		if f, err = fs.Open(p); err == nil {
			b, err = io.ReadAll(f)
			_ = f.Close()
		}
	}
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, b, fmt.Errorf("%s: %w", p, err)
	}
	return m, b, nil
}

func manifestDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// runProblem says why a run must never be purged, or "": the manifest is
// another table's, or names a file outside its own run directory (the
// manifest is data on storage; a run may only delete inside itself).
func runProblem(dir string, m QuarantineManifest, tableUUID string) string {
	if m.TableUUID != tableUUID {
		return "written for another table (uuid " + m.TableUUID + ")"
	}
	var stray []string
	for _, f := range m.Files {
		if !insideRun(dir, f.Quarantined) {
			stray = append(stray, f.Quarantined)
		}
	}
	if len(stray) > 0 {
		return "manifest names files outside the run (" + strings.Join(stray, ", ") + ")"
	}
	return ""
}

// scanQuarantine reports the table's quarantine runs from their manifests
// alone (one read each; the quarantined files are not listed). Nothing here
// is fatal: a run whose manifest cannot be read is reported with the
// problem, and is never due.
//
// missing, when set, tells the referenced files the listing lacked
// (OrphanScan.MissingReferenced): a run holding one of them holds live
// data, and says so.
func scanQuarantine(fs iceio.IO, location, tableUUID string, missing func(original string) bool) []diff.QuarantineRun {
	runs, err := quarantineRuns(fs, location)
	if err != nil {
		return []diff.QuarantineRun{{Problem: "list " + QuarantineDir + ": " + err.Error()}}
	}
	qroot := quarantineRoot(location)
	var out []diff.QuarantineRun
	for _, r := range runs {
		dir := qroot + "/" + r
		qr := diff.QuarantineRun{RunID: r}
		m, raw, err := readQuarantineManifestRaw(fs, dir+"/"+QuarantineManifestName)
		if err != nil {
			qr.Problem = "manifest unreadable: " + err.Error()
			out = append(out, qr)
			continue
		}
		qr.ManifestDigest = manifestDigest(raw)
		qr.CreatedAtMs = m.CreatedAt.UnixMilli()
		if !m.PurgeAfter.IsZero() {
			qr.PurgeAfterMs = m.PurgeAfter.UnixMilli()
		}
		var live []string
		for _, f := range m.Files {
			qr.Files++
			qr.Bytes += max(f.Size, 0)
			if missing != nil && missing(f.Original) {
				live = append(live, f.Original)
			}
		}
		qr.Problem = runProblem(dir, m, tableUUID)
		qr.Referenced = live
		out = append(out, qr)
	}
	return out
}

// quarantineRuns lists the run directories of a table's quarantine.
func quarantineRuns(fs iceio.IO, location string) ([]string, error) {
	qroot := quarantineRoot(location)
	if l, ok := execLocalPath(qroot); ok {
		ents, err := os.ReadDir(l)
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, e.Name())
			}
		}
		return out, nil
	}
	lio, ok := fs.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("storage %T cannot list", fs)
	}
	seen := map[string]bool{}
	err := lio.WalkDir(qroot, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path.Base(p) != QuarantineDir && path.Base(path.Dir(p)) != QuarantineDir {
			return iofs.SkipDir // below a run: its manifest is all we read
		}
		if !d.IsDir() && path.Base(p) == QuarantineManifestName {
			seen[path.Base(path.Dir(p))] = true
		}
		return nil
	})
	if err != nil && !execIsNotExist(err) {
		return nil, err
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// PurgeResult is what purging a table's planned quarantine runs did.
type PurgeResult struct {
	Runs   []string // runs deleted
	Files  int64
	Bytes  int64
	Kept   []string // planned runs kept, with why
	Errors []string
}

// purgeQuarantine deletes the quarantine runs the plan listed, and no
// other. A planned run is kept whole when its manifest is gone or differs
// from the one planned (ManifestDigest), when it is not due at now, when
// the manifest is another table's or names files outside the run, or when
// the table references any of its original paths again (the quarantined
// copy is then the only copy of a live file).
func purgeQuarantine(ctx context.Context, fs iceio.IO, tbl *table.Table, now time.Time, planned []diff.PurgeRun, remove func(string) error) PurgeResult {
	var pr PurgeResult
	qroot := quarantineRoot(tbl.Location())
	uuid := tbl.Metadata().TableUUID().String()
	type due struct {
		dir string
		m   QuarantineManifest
	}
	var dues []due
	for _, r := range planned {
		if !validRunID(r.RunID) {
			pr.Kept = append(pr.Kept, fmt.Sprintf("%q: not a run id, nothing purged", r.RunID))
			continue
		}
		dir := qroot + "/" + r.RunID
		m, raw, err := readQuarantineManifestRaw(fs, dir+"/"+QuarantineManifestName)
		switch {
		case err != nil && execIsNotExist(err):
			pr.Kept = append(pr.Kept, r.RunID+": its manifest is gone since the plan (restored or removed), nothing purged")
		case err != nil:
			pr.Kept = append(pr.Kept, r.RunID+": manifest unreadable, kept: "+err.Error())
		case manifestDigest(raw) != r.ManifestDigest:
			pr.Kept = append(pr.Kept, r.RunID+": manifest changed since the plan, kept; run iceops plan again")
		case m.PurgeAfter.IsZero() || now.Before(m.PurgeAfter):
			pr.Kept = append(pr.Kept, r.RunID+": not due, kept")
		default:
			if why := runProblem(dir, m, uuid); why != "" {
				pr.Kept = append(pr.Kept, r.RunID+": "+why+", kept")
				continue
			}
			dues = append(dues, due{dir, m})
		}
	}
	if len(dues) == 0 {
		return pr
	}
	// The table must not reference any original path: were a slow writer
	// to have committed one, the quarantined copy is the only copy left.
	refd := map[string]bool{}
	for _, d := range dues {
		for _, f := range d.m.Files {
			refd[execNormPath(f.Original)] = false
		}
	}
	if err := markReferenced(ctx, fs, tbl, refd); err != nil {
		pr.Errors = append(pr.Errors, "referenced set (nothing purged): "+err.Error())
		return pr
	}
	for _, d := range dues {
		var live []string
		for _, f := range d.m.Files {
			if refd[execNormPath(f.Original)] {
				live = append(live, f.Original)
			}
		}
		if len(live) > 0 {
			pr.Kept = append(pr.Kept, fmt.Sprintf("%s: the table references %s again; run iceops restore %s with this table's address", path.Base(d.dir), strings.Join(live, ", "), path.Base(d.dir)))
			continue
		}
		var failed bool
		for _, f := range d.m.Files {
			if err := ctx.Err(); err != nil {
				pr.Errors = append(pr.Errors, fmt.Sprintf("%s: not purged: %v", f.Quarantined, err))
				failed = true
				break
			}
			if !quarantineExists(fs, f.Quarantined) {
				continue
			}
			if err := remove(f.Quarantined); err != nil && !execIsNotExist(err) {
				pr.Errors = append(pr.Errors, fmt.Sprintf("%s: %v", f.Quarantined, err))
				failed = true
				continue
			}
			pr.Files++
			pr.Bytes += max(f.Size, 0)
		}
		if failed {
			continue // the manifest stays, so the rest is found next time
		}
		if err := remove(d.dir + "/" + QuarantineManifestName); err != nil && !execIsNotExist(err) {
			pr.Errors = append(pr.Errors, fmt.Sprintf("%s: %v", d.dir, err))
			continue
		}
		if l, ok := execLocalPath(d.dir); ok {
			removeEmptyDirs(l)
		}
		pr.Runs = append(pr.Runs, path.Base(d.dir))
	}
	return pr
}

// removeEmptyDirs removes dir and the directories below it that are empty
// (never a file).
func removeEmptyDirs(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, on a non-empty directory
	}
}

// markReferenced sets refd[k] for every key that the table's current
// metadata references (all snapshots, DELETED entries included, statistics,
// the metadata log, the current metadata and version-hint).
func markReferenced(ctx context.Context, fs iceio.IO, tbl *table.Table, refd map[string]bool) error {
	md := tbl.Metadata()
	mark := func(p string) {
		k := execNormPath(p)
		if _, ok := refd[k]; ok {
			refd[k] = true
		}
	}
	var ids []int64
	for _, s := range md.Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	if err := walkReachable(ctx, fs, md, ids, true, func(p string, _ int64, _ string) error {
		mark(p)
		return nil
	}); err != nil {
		return err
	}
	mark(tbl.MetadataLocation())
	for e := range md.PreviousFiles() {
		mark(e.MetadataFile)
	}
	mark(strings.TrimSuffix(md.Location(), "/") + "/metadata/version-hint.text")
	return nil
}

// RestoreResult is what a restore put back.
type RestoreResult struct {
	RunID    string
	Restored []QuarantinedFile
	// Refused are files not put back, with why (an existing file at the
	// original path is never overwritten).
	Refused []string
	Bytes   int64
}

// RestoreQuarantine moves every file of one quarantine run of address back
// to its original path. It never overwrites: a file that exists at the
// original path is refused and its quarantined copy stays. When everything
// went back the run's manifest is removed.
func (s *Session) RestoreQuarantine(ctx context.Context, address, runID string) (RestoreResult, error) {
	res := RestoreResult{RunID: runID}
	if !validRunID(runID) {
		return res, fmt.Errorf("invalid quarantine run id %q", runID)
	}
	tbl, err := s.LoadTable(ctx, address)
	if err != nil {
		return res, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("open table storage: %w", err)
	}
	runDir := quarantineRoot(tbl.Location()) + "/" + runID
	m, err := readQuarantineManifest(fs, runDir+"/"+QuarantineManifestName)
	if err != nil {
		if execIsNotExist(err) {
			return res, fmt.Errorf("%s has no quarantine run %q", address, runID)
		}
		return res, fmt.Errorf("read quarantine manifest: %w", err)
	}
	if m.TableUUID != "" && m.TableUUID != tbl.Metadata().TableUUID().String() {
		return res, fmt.Errorf("%w: quarantine run %s belongs to table uuid %s, not %s", ErrRefused, runID, m.TableUUID, tbl.Metadata().TableUUID())
	}
	roots := OrphanRoots(tbl.Location(), tbl.Properties())
	left := 0
	for _, f := range m.Files {
		if err := ctx.Err(); err != nil {
			res.Refused = append(res.Refused, f.Original+": "+err.Error())
			left++
			continue
		}
		// The manifest is data on storage: never let it send a file outside
		// the table's locations, or take one from outside the run.
		if execRootOf(roots, f.Original) == "" {
			res.Refused = append(res.Refused, f.Original+": outside the table's locations")
			left++
			continue
		}
		if !insideRun(runDir, f.Quarantined) {
			res.Refused = append(res.Refused, f.Original+": quarantined path "+f.Quarantined+" is not inside the run")
			left++
			continue
		}
		if !quarantineExists(fs, f.Quarantined) {
			if !f.Moved || quarantineExists(fs, f.Original) {
				// Never moved, or put back by an earlier restore that
				// could not finish: it is at Original.
				continue
			}
			res.Refused = append(res.Refused, f.Original+": the quarantined copy is missing")
			left++
			continue
		}
		if sameLocalFile(f.Quarantined, f.Original) {
			// An earlier restore was interrupted between its link and its
			// unlink: the file is back already; finish by dropping the
			// quarantine's name for it.
			if err := fs.Remove(f.Quarantined); err != nil {
				res.Refused = append(res.Refused, f.Original+": "+err.Error())
				left++
				continue
			}
			res.Restored = append(res.Restored, f)
			res.Bytes += max(f.Size, 0)
			continue
		}
		if quarantineExists(fs, f.Original) {
			res.Refused = append(res.Refused, f.Original+": a file exists there; not overwritten")
			left++
			continue
		}
		if err := moveFileNoClobber(fs, f.Quarantined, f.Original); err != nil {
			res.Refused = append(res.Refused, f.Original+": "+err.Error())
			left++
			continue
		}
		res.Restored = append(res.Restored, f)
		res.Bytes += max(f.Size, 0)
	}
	if left == 0 {
		if err := fs.Remove(runDir + "/" + QuarantineManifestName); err == nil {
			if l, ok := execLocalPath(runDir); ok {
				removeEmptyDirs(l)
			}
		}
	}
	return res, nil
}

// validRunID: a run id names one directory below the quarantine, never a
// path.
func validRunID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\")
}

// insideRun reports whether p lies strictly inside the run directory,
// with no ".." that could lead out of it.
func insideRun(runDir, p string) bool {
	n := execNormPath(p)
	return strings.HasPrefix(n, execNormPath(runDir)+"/") && !strings.Contains(n, "/../") && !strings.HasSuffix(n, "/..")
}

// moveFileNoClobber is moveFile that fails instead of replacing an existing
// destination (local: a hard link then unlink, which is atomic about it).
func moveFileNoClobber(fs iceio.IO, src, dst string) error {
	ls, okS := execLocalPath(src)
	ld, okD := execLocalPath(dst)
	if okS && okD {
		if err := os.MkdirAll(filepath.Dir(ld), 0o755); err != nil {
			return err
		}
		if err := os.Link(ls, ld); err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return errors.New("a file exists there; not overwritten")
			}
			return err
		}
		return os.Remove(ls)
	}
	if quarantineExists(fs, dst) {
		return errors.New("a file exists there; not overwritten")
	}
	return moveFile(fs, src, dst)
}

// sameLocalFile reports whether two local paths name one file (one inode):
// what an interrupted link-then-unlink move leaves. Links are not followed.
func sameLocalFile(a, b string) bool {
	la, okA := execLocalPath(a)
	lb, okB := execLocalPath(b)
	if !okA || !okB {
		return false
	}
	sa, errA := os.Lstat(la)
	sb, errB := os.Lstat(lb)
	return errA == nil && errB == nil && sa.Mode().IsRegular() && os.SameFile(sa, sb)
}
