package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// MinOrphanAge is the floor of orphan_files.older_than (DESIGN §3.2).
const MinOrphanAge = 24 * time.Hour

// OrphanSpec is the approved list of orphan paths and the age guard.
type OrphanSpec struct {
	Paths     []string
	OlderThan time.Duration
	Now       time.Time
	// DeleteConcurrency bounds parallel deletions (default 8).
	DeleteConcurrency int
	Progress          ExecProgress
	// Quarantine moves the orphans under <table location>/.iceops-quarantine/
	// (keeping their relative path) instead of deleting them, when the policy
	// sets orphan_files.quarantine. Purging the quarantine is issue 5's.
	Quarantine bool
}

// RemoveOrphanFiles deletes the planned orphan paths that are, at apply
// time, still orphans (DESIGN §5.5 rules 1, 2, 5, 6, 7):
//   - gc.enabled=false and an age guard below 24h are refused;
//   - only paths inside the table's location, write.data.path or
//     write.metadata.path are considered;
//   - each path is stat'ed first (the re-listing): it must still exist, be a
//     regular file reached without any symbolic link, and be older than the
//     guard;
//   - only then is the table re-loaded from the catalog and its referenced
//     set built (every snapshot's manifest list, manifests, data and delete
//     files, statistics, the metadata log, the current metadata and
//     version-hint), so a file committed in between is referenced and
//     survives.
//
// It never deletes a path the plan did not list.
func RemoveOrphanFiles(ctx context.Context, cat table.CatalogIO, tbl *table.Table, spec OrphanSpec) (ExecResult, error) {
	res := ExecResult{MetadataLocation: tbl.MetadataLocation()}
	if !GCEnabled(tbl.Properties()) {
		return res, fmt.Errorf("%w: gc.enabled=false: the table's files may be shared with other tables", ErrRefused)
	}
	if spec.OlderThan < MinOrphanAge {
		return res, fmt.Errorf("%w: older_than %s is below the %s floor", ErrRefused, spec.OlderThan, MinOrphanAge)
	}
	if spec.Now.IsZero() {
		return res, fmt.Errorf("%w: no clock given for the age guard", ErrRefused)
	}
	cutoff := spec.Now.Add(-spec.OlderThan)
	roots := OrphanRoots(tbl.Location(), tbl.Properties())
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("open table storage: %w", err)
	}

	// Rule 1: the listing (here: a fresh stat of every planned path) comes
	// before the referenced set.
	type cand struct {
		path string
		size int64
	}
	var cands []cand
	for _, p := range spec.Paths {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("orphan re-check interrupted (nothing deleted): %w", err)
		}
		root := execRootOf(roots, p)
		if root == "" {
			res.Skipped = append(res.Skipped, p+": outside the table's locations")
			continue
		}
		size, mtime, why := execStatCandidate(fs, root, p)
		if why != "" {
			res.Skipped = append(res.Skipped, p+": "+why)
			continue
		}
		if !mtime.Before(cutoff) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: modified %s, newer than older_than", p, mtime.UTC().Format(time.RFC3339)))
			continue
		}
		cands = append(cands, cand{p, size})
	}
	if len(cands) == 0 {
		res.NoOp, res.Note = true, "no planned orphan is still deletable"
		return res, nil
	}

	fresh, err := cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return res, fmt.Errorf("re-load table for the referenced set (nothing deleted): %w", err)
	}
	fm := fresh.Metadata()
	if fm.TableUUID() != tbl.Metadata().TableUUID() {
		return res, fmt.Errorf("%w: table UUID changed; nothing deleted", ErrRefused)
	}
	if !GCEnabled(fm.Properties()) {
		return res, fmt.Errorf("%w: gc.enabled=false", ErrRefused)
	}
	// Only the candidates' membership matters, so the referenced files are
	// streamed past the (small) candidate set instead of being collected:
	// memory stays bounded by the plan, not by the table. DELETED manifest
	// entries count as references here (withDeleted), erring toward keeping.
	refd := map[string]bool{}
	for _, c := range cands {
		refd[execNormPath(c.path)] = false
	}
	mark := func(p string) {
		k := execNormPath(p)
		if _, ok := refd[k]; ok {
			refd[k] = true
		}
	}
	var ids []int64
	for _, s := range fm.Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	if err := walkReachable(ctx, fs, fm, ids, true, func(p string, _ int64, _ string) error {
		mark(p)
		return nil
	}); err != nil {
		return res, fmt.Errorf("build referenced set (nothing deleted): %w", err)
	}
	mark(fresh.MetadataLocation())
	for e := range fm.PreviousFiles() {
		mark(e.MetadataFile)
	}
	mark(strings.TrimSuffix(fm.Location(), "/") + "/metadata/version-hint.text")

	var doomed []execFileRef
	for _, c := range cands {
		if refd[execNormPath(c.path)] {
			res.Skipped = append(res.Skipped, c.path+": referenced by the table now")
			continue
		}
		doomed = append(doomed, execFileRef{path: c.path, size: c.size})
	}
	slices.Sort(res.Skipped)
	if spec.Quarantine {
		quarantine(ctx, fs, fm.Location(), roots, doomed, spec.Progress, &res)
		return res, nil
	}
	execDeleteFiles(ctx, fs, doomed, spec.DeleteConcurrency, spec.Progress, &res)
	return res, nil
}

// quarantine moves each file to the table's quarantine directory: a rename
// for local files, copy-then-remove elsewhere (the copy is complete before
// the original goes, so a failure leaves at worst two copies, never none).
func quarantine(ctx context.Context, fs iceio.IO, location string, roots []string, files []execFileRef, progress ExecProgress, res *ExecResult) {
	qroot := strings.TrimSuffix(location, "/") + "/" + QuarantineDir
	total := int64(len(files))
	progress.report(0, total, "files")
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined: %v", f.path, err))
			continue
		}
		root := execRootOf(roots, f.path)
		rel := strings.TrimPrefix(execNormPath(f.path), root+"/")
		dest := qroot + "/" + rel
		if err := moveFile(fs, f.path, dest); err != nil {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: quarantine: %v", f.path, err))
			continue
		}
		res.FilesQuarantined++
		if f.size > 0 {
			res.BytesFreed += f.size
		}
		progress.report(int64(i+1), total, "files")
	}
}

func moveFile(fs iceio.IO, src, dst string) error {
	if ls, ok := execLocalPath(src); ok {
		ld, ok := execLocalPath(dst)
		if !ok {
			return fmt.Errorf("quarantine %s is not local", dst)
		}
		if err := os.MkdirAll(filepath.Dir(ld), 0o755); err != nil {
			return err
		}
		return os.Rename(ls, ld)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", fs)
	}
	in, err := fs.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := wfs.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return fs.Remove(src)
}

// OrphanRoots is the sweep scope of a table: its location and its data and
// metadata paths when set, normalised.
func OrphanRoots(location string, props map[string]string) []string {
	var roots []string
	for _, r := range []string{location, props["write.data.path"], props["write.metadata.path"]} {
		if r == "" {
			continue
		}
		n := execNormPath(r)
		if !slices.Contains(roots, n) {
			roots = append(roots, n)
		}
	}
	return roots
}

// execRootOf returns the root p lies strictly inside, or "".
func execRootOf(roots []string, p string) string {
	n := execNormPath(p)
	for _, r := range roots {
		if strings.HasPrefix(n, r+"/") && !strings.Contains(n[len(r):], "/../") && !strings.HasSuffix(n, "/..") {
			return r
		}
	}
	return ""
}

// execStatCandidate reports a candidate's size and mtime, or why it must not be
// deleted. Local files are checked with Lstat on every path component below
// the root, so a symbolic link (to a file or a directory) is never followed.
func execStatCandidate(fs iceio.IO, root, p string) (int64, time.Time, string) {
	if local, ok := execLocalPath(p); ok {
		rootLocal, _ := execLocalPath(root)
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
		if execIsNotExist(err) {
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

// execLocalPath turns a file:// URL or a bare absolute path into an OS path.
func execLocalPath(p string) (string, bool) {
	if strings.HasPrefix(p, "/") {
		return filepath.Clean(p), true
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

func execIsNotExist(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, os.ErrNotExist)
}
