package orphans

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/objlist"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// QuarantineManifestName is the manifest of one quarantine run, beside the
// moved files in <location>/.icewright-quarantine/<run-id>/. Its leading dot
// keeps it apart from the relative paths of the files (an orphan with that
// exact relative path is not quarantined).
const QuarantineManifestName = ".icewright-manifest.json"

// QuarantineManifest records what one apply moved, so that restore can put
// every file back where it was and purge knows when the grace period ends.
type QuarantineManifest struct {
	RunID     string    `json:"run_id"`
	Table     string    `json:"table"` // namespace.name
	TableUUID string    `json:"table_uuid"`
	CreatedAt time.Time `json:"created_at"`
	// PurgeAfter is when a later apply may delete the run; zero when the
	// policy's duration was not known (then it is never purged by icewright).
	PurgeAfter time.Time              `json:"purge_after,omitzero"`
	Files      []diff.QuarantinedFile `json:"files"`
}

// quarantineRoot is <location>/.icewright-quarantine.
func quarantineRoot(location string) string {
	return strings.TrimSuffix(location, "/") + "/" + QuarantineDir
}

// newRunID names a run by its start time (sortable, readable in a
// listing); a second run within the same second gets a suffix.
func newRunID(now time.Time) string {
	return now.UTC().Format("20060102T150405Z")
}

// quarantineTarget is where f goes inside the run directory: its path
// relative to the table location, or, for a file under write.data.path or
// write.metadata.path elsewhere, relative to that root under "root-<i>/".
func quarantineTarget(runDir, location string, roots []string, p string) (string, bool) {
	loc := store.NormPath(location)
	root := plainRootOf(roots, p)
	if root == "" {
		return "", false
	}
	rel := strings.TrimPrefix(store.NormPath(p), root+"/")
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
//
// The counts are exact (issue 17): FilesQuarantined are the files now only
// in the run; a file whose move failed before its copy was written is still
// in place (FilesNotMoved); one whose copy was written but whose original
// could not be removed is in both places (FilesInBothPlaces); a file that
// was gone when its move started (another run took it) is no move at all
// and is dropped from the manifest. Every file not moved is named in
// DeleteErrors (or Skipped, for a file that was gone), so the action fails.
//
// A local file moves with one rename (moveLocalFiles); on an object store a
// batch of files is copied, then its originals are deleted with the store's
// batch delete through del (moveObjects).
func quarantineFiles(ctx context.Context, fs iceio.IO, tbl *table.Table, roots []string, files []fileRef, spec Spec, del deleter, res *store.Result) string {
	loc := tbl.Location()
	runDir, err := freeRunDir(fs, loc, spec)
	if err != nil {
		for _, f := range files {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined (still in place): check run %s: %v", f.path, path.Base(runDir), err))
		}
		res.FilesNotMoved += int64(len(files))
		return ""
	}
	runID := path.Base(runDir)
	man, moving := plannedMoves(fs, tbl, roots, runDir, files, spec, res)
	if len(moving) == 0 {
		return ""
	}
	manPath := runDir + "/" + QuarantineManifestName
	if err := writeQuarantineManifest(fs, loc, manPath, man); err != nil {
		// Without a manifest the files could not be restored by icewright:
		// move nothing.
		for _, f := range moving {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined (still in place): manifest: %v", f.path, err))
		}
		res.FilesNotMoved += int64(len(moving))
		return ""
	}
	if spec.beforeMove != nil {
		spec.beforeMove()
	}
	states := map[string]placeState{}
	moveErrs := map[string]error{}
	if _, local := store.LocalPath(loc); local {
		moveLocalFiles(ctx, fs, loc, roots, runDir, moving, spec, states, moveErrs)
	} else {
		moveObjects(ctx, fs, loc, roots, runDir, moving, spec, del, states, moveErrs)
	}
	quarantinedBytes := countMoves(moving, states, moveErrs, res)
	if !finishRunManifest(fs, loc, runDir, man, states, res) || res.FilesQuarantined == 0 {
		return ""
	}
	return fmt.Sprintf("quarantined %d files (%d bytes) in run %s", res.FilesQuarantined, quarantinedBytes, runID)
}

// freeRunDir is the directory of this quarantine run: the run id's, or,
// when a run of that id is there already, the id with the first free
// suffix (-2, -3, ...). On an error, the directory it could not check.
func freeRunDir(fs iceio.IO, loc string, spec Spec) (string, error) {
	runID := spec.RunID
	if runID == "" {
		runID = newRunID(spec.Now)
	}
	qroot := quarantineRoot(loc)
	runDir := qroot + "/" + runID
	for i := 2; ; i++ {
		exists, err := presence(fs, loc, runDir+"/"+QuarantineManifestName)
		if err != nil {
			return runDir, err
		}
		if !exists {
			return runDir, nil
		}
		runDir = fmt.Sprintf("%s/%s-%d", qroot, runID, i)
	}
}

// plannedMoves is the run's first manifest (every file it will move, none
// moved yet) and the files to move; a file with no place in the
// quarantine is kept and reported.
func plannedMoves(fs iceio.IO, tbl *table.Table, roots []string, runDir string, files []fileRef, spec Spec, res *store.Result) (QuarantineManifest, []fileRef) {
	loc := tbl.Location()
	man := QuarantineManifest{
		RunID: path.Base(runDir), Table: strings.Join(tbl.Identifier(), "."), TableUUID: tbl.Metadata().TableUUID().String(),
		CreatedAt: spec.Now.UTC(),
	}
	if spec.QuarantineFor > 0 {
		man.PurgeAfter = spec.Now.Add(spec.QuarantineFor).UTC()
	}
	var moving []fileRef
	for _, f := range files {
		dest, ok := quarantineTarget(runDir, loc, roots, f.path)
		if !ok {
			res.Skipped = append(res.Skipped, f.path+": no place for it in the quarantine, kept")
			continue
		}
		_, mtime, _ := statCandidate(fs, plainRootOf(roots, f.path), f.path)
		man.Files = append(man.Files, diff.QuarantinedFile{Original: f.path, Quarantined: dest, Size: f.size, Mtime: mtime.UTC()})
		moving = append(moving, f)
	}
	return man, moving
}

// countMoves counts in res where each moved file ended up, naming each
// one not moved cleanly, and returns the bytes quarantined.
func countMoves(moving []fileRef, states map[string]placeState, moveErrs map[string]error, res *store.Result) int64 {
	var quarantinedBytes int64
	for _, f := range moving {
		st, started := states[f.path]
		err := moveErrs[f.path]
		switch {
		case !started:
			// runBatched stopped before it (interrupted, or the store was
			// judged unresponsive).
			res.FilesNotMoved++
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined, still in place: not started: %v", f.path, err))
		case st == stateMoved:
			res.FilesQuarantined++
			// Not BytesFreed: a quarantined file still takes its space
			// until the purge, which counts it then.
			quarantinedBytes += max(f.size, 0)
		case st == stateGone:
			res.Skipped = append(res.Skipped, f.path+": no longer exists when its move started (another run moved or deleted it), not counted")
		case st == stateBoth:
			res.FilesInBothPlaces++
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: copied into the quarantine, original still in place: %v", f.path, err))
		case st == stateUnknown:
			res.FilesPlaceUnknown++
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: place unknown: %v", f.path, err))
		default:
			res.FilesNotMoved++
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: not quarantined, still in place: %v", f.path, err))
		}
	}
	return quarantinedBytes
}

// finishRunManifest rewrites the run's manifest with the files that are
// in the quarantine now (Moved set on those moved), or removes the run
// when none is. It reports whether a run is left.
func finishRunManifest(fs iceio.IO, loc, runDir string, man QuarantineManifest, states map[string]placeState, res *store.Result) bool {
	manPath := runDir + "/" + QuarantineManifestName
	kept := man.Files[:0:0]
	var moved []string
	for _, f := range man.Files {
		switch states[f.Original] {
		case stateMoved:
			f.Moved = true
			moved = append(moved, f.Original+" -> "+f.Quarantined)
		case stateBoth, stateUnknown:
		default:
			continue // still only at Original, or not there at all
		}
		kept = append(kept, f)
	}
	man.Files = kept
	if len(res.DeleteErrors) > 0 {
		// Incomplete: the results name every file with its place (the
		// final manifest below may not be written either).
		res.Moved = moved
	}
	if len(man.Files) == 0 {
		// Nothing of this run is in the quarantine: no run is left behind.
		if err := removeQuarantineFile(fs, loc, manPath); err != nil && !store.IsNotExist(err) {
			res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: remove the manifest of an empty run: %v", manPath, err))
		}
		if l, ok := store.LocalPath(runDir); ok {
			removeEmptyDirs(l)
		}
		return false
	}
	if err := writeQuarantineManifest(fs, loc, manPath, man); err != nil {
		// The first manifest lists every file (Moved=false); restore checks
		// where each file actually is, so it still works.
		res.DeleteErrors = append(res.DeleteErrors, fmt.Sprintf("%s: final manifest not written (the first one, which lists every file, stays): %v", manPath, err))
		res.Moved = moved
	}
	return true
}

// errNotMoved tells runBatched that a file did not move.
var errNotMoved = errors.New("not moved")

// placeState is where one file of a move is.
type placeState int

const (
	stateInPlace placeState = iota // only at the original path
	stateMoved                     // only at the quarantined path
	stateBoth                      // at both (the copy was written, the original not removed)
	stateGone                      // at neither (when the move started)
	stateUnknown                   // a request got no answer: its error says what is known
)

// moving runs one move (on an object store, one copy) through the tests'
// Spec.move hook when set.
func (s Spec) moving(src string, do func() (placeState, error)) (placeState, error) {
	if s.move != nil {
		return s.move(src, do)
	}
	return do()
}

// moveLocalFiles moves files on a local disk, each with one rename
// (quarantineMoveLocal), in runBatched's batches. It records each started
// file's place in states and error in errs; a file never started has no
// state, and errs says why.
func moveLocalFiles(ctx context.Context, fs iceio.IO, loc string, roots []string, runDir string, files []fileRef, spec Spec, states map[string]placeState, errs map[string]error) {
	var mu sync.Mutex
	runBatched(ctx, files, spec.DeleteConcurrency, spec.BatchSize, spec.Progress, func(f fileRef) error {
		dest, _ := quarantineTarget(runDir, loc, roots, f.path)
		do := func() (placeState, error) {
			return quarantineMoveLocal(loc, plainRootOf(roots, f.path), f.path, dest)
		}
		st, err := spec.moving(f.path, do)
		mu.Lock()
		states[f.path], errs[f.path] = st, err
		mu.Unlock()
		if st != stateMoved {
			// Not a move (runBatched would count a "not exist" as done):
			// sorted out by the caller, from the state.
			return errNotMoved
		}
		return nil
	}, func(fileRef) {}, func(f fileRef, err error, started bool) {
		// runBatched serialises ok and failed with its own lock, not with
		// mu: a file not started is named while moves are still under way.
		if !started {
			mu.Lock()
			errs[f.path] = err
			mu.Unlock()
		}
	})
}

// moveObjects moves files on an object store in batches (Spec.BatchSize,
// default 1,000): the batch's files are copied into the run, at most
// Spec.DeleteConcurrency (default 8) at once (on S3 server-side, one
// CopyObject each), then the originals whose copy is confirmed are deleted
// together through the store's batch delete (objdel: one DeleteObjects per
// 1,000 keys on S3), with Spec.Cooldown between batches. It records what
// moveLocalFiles records; each file's place follows from its copy and its
// delete (originalRemoved).
//
// No copy starts once the store is judged unresponsive, and no batch starts
// once interrupted; the delete of a batch whose copies were made is still
// sent when interrupted (the batch under way finishes, as the local moves
// do), but not once the store is judged unresponsive (objdel checks the
// breaker before each request): those files are then in both places.
func moveObjects(ctx context.Context, fs iceio.IO, loc string, roots []string, runDir string, files []fileRef, spec Spec, del deleter, states map[string]placeState, errs map[string]error) {
	conc := spec.DeleteConcurrency
	if conc <= 0 {
		conc = defaultConcurrency
	}
	size := spec.BatchSize
	if size <= 0 {
		size = defaultBatch
	}
	total := int64(len(files))
	spec.Progress.Report(0, total, "files")
	var (
		mu   sync.Mutex
		done int64
	)
	record := func(f fileRef, st placeState, err error) {
		mu.Lock()
		defer mu.Unlock()
		states[f.path], errs[f.path] = st, err
	}
	notStarted := func(rest []fileRef, err error) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range rest {
			errs[f.path] = err
		}
	}
	// The batch under way finishes when interrupted: its delete is sent
	// without ctx's cancellation, yet with its breaker.
	finish := del
	finish.ctx = context.WithoutCancel(ctx)
	finish.progress = nil
	for start := 0; start < len(files); start += size {
		if start > 0 && spec.Cooldown > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(spec.Cooldown):
			}
		}
		if err := bound.Stop(ctx); err != nil {
			notStarted(files[start:], err)
			return
		}
		part := files[start:min(start+size, len(files))]
		var (
			wg     sync.WaitGroup
			copied []fileRef
			stop   error
		)
		sem := make(chan struct{}, conc)
		for i, f := range part {
			sem <- struct{}{}
			if stop = bound.BreakerOf(ctx).Err(); stop != nil {
				notStarted(part[i:], stop)
				break
			}
			wg.Add(1)
			go func(f fileRef) {
				defer wg.Done()
				defer func() { <-sem }()
				dest, _ := quarantineTarget(runDir, loc, roots, f.path)
				do := func() (placeState, error) {
					return copyIntoQuarantine(ctx, fs, loc, f.path, dest)
				}
				st, err := spec.moving(f.path, do)
				if st == stateBoth && err == nil {
					// Copied: its original goes in the batch's delete.
					mu.Lock()
					copied = append(copied, f)
					mu.Unlock()
					return
				}
				record(f, st, err)
			}(f)
		}
		wg.Wait()
		finish.run(copied, func(f fileRef) string { return plainRootOf(roots, f.path) }, nil, func(f fileRef) {
			record(f, stateMoved, nil)
			mu.Lock()
			done++
			spec.Progress.Report(done, total, "files")
			mu.Unlock()
		}, func(f fileRef, err error, started bool) {
			st, err := originalRemoved(err, started)
			record(f, st, err)
		})
		if stop != nil {
			notStarted(files[start+len(part):], stop)
			return
		}
	}
}

// originalRemoved is where a copied file is after the delete of its
// original failed (err; sent false: the delete was never sent).
func originalRemoved(err error, sent bool) (placeState, error) {
	switch {
	case !sent:
		return stateBoth, fmt.Errorf("original not removed: %w", err)
	case bound.Unanswered(err):
		return stateUnknown, fmt.Errorf("copied into the quarantine; the delete of the original got no answer, so the original may still be in place: %w", err)
	}
	return stateBoth, fmt.Errorf("remove original: %w", err)
}

// quarantineMoveLocal moves src (below srcRoot) to dst (below the table
// location loc) with one rename, after every component of both paths was
// checked with Lstat: a symbolic link is never followed, neither into nor
// out of the quarantine. It says where the file is afterwards.
func quarantineMoveLocal(loc, srcRoot, src, dst string) (placeState, error) {
	ls, ok := store.LocalPath(src)
	if !ok {
		return stateInPlace, fmt.Errorf("%s is not local", src)
	}
	ld, ok := store.LocalPath(dst)
	if !ok {
		return stateInPlace, fmt.Errorf("quarantine %s is not local", dst)
	}
	if _, err := localLstat(srcRoot, src); err != nil {
		if store.IsNotExist(err) {
			return stateGone, nil
		}
		return stateInPlace, err
	}
	if err := localMkdirNoLink(loc, path.Dir(dst)); err != nil {
		return stateInPlace, err
	}
	if err := os.Rename(ls, ld); err != nil {
		if _, lerr := os.Lstat(ls); store.IsNotExist(lerr) {
			return stateGone, nil
		}
		return stateInPlace, err
	}
	return stateMoved, nil
}

// copyIntoQuarantine copies src to dst (below the table location loc) on an
// object store, the first half of a move: stateBoth with no error is a copy
// confirmed (the original is still to be deleted). It does not start once
// the table's store is judged unresponsive (bound.Breaker); a copy without
// an answer leaves the file's place unknown, with what is known said.
func copyIntoQuarantine(ctx context.Context, fs iceio.IO, loc, src, dst string) (placeState, error) {
	if err := bound.BreakerOf(ctx).Err(); err != nil {
		return stateInPlace, err
	}
	// On S3 the copy is server-side (CopyObject): no byte passes through
	// icewright. A source over CopyObject's 5 GiB limit is streamed.
	copied, gone, err := serverSideCopy(ctx, fs, src, dst)
	if gone {
		return stateGone, nil
	}
	if !copied && err == nil {
		err = streamCopy(ctx, fs, src, dst, &gone)
		if gone {
			return stateGone, nil
		}
	}
	if err != nil {
		// A write whose answer was lost may have landed: look.
		there, perr := presence(fs, loc, dst)
		switch {
		case perr != nil:
			return stateUnknown, fmt.Errorf("the original is still in place; its copy into the quarantine failed (%w) and whether the copy was written is unknown: %v", err, perr)
		case there:
			return stateBoth, fmt.Errorf("copy: %w (yet the quarantined copy exists)", err)
		}
		return stateInPlace, fmt.Errorf("copy: %w", err)
	}
	return stateBoth, nil
}

// serverSideCopy copies src to dst with one S3 CopyObject when both are
// in the bucket of fs's S3 client. copied false with no error: not S3 (or
// too large for one CopyObject), the caller streams the copy.
func serverSideCopy(ctx context.Context, fs iceio.IO, src, dst string) (copied, gone bool, err error) {
	c, ok := objlist.S3Client(fs)
	if !ok {
		return false, false, nil
	}
	sb, sk, ok1 := splitS3(src)
	db, dk, ok2 := splitS3(dst)
	if !ok1 || !ok2 || sb != db || strings.ContainsFunc(sk+dk, func(r rune) bool { return r < 32 }) || strings.Contains(sk+dk, "../") {
		return false, false, nil // keys gocloud stores escaped are copied through the IO
	}
	_, err = c.CopyObject(context.WithoutCancel(ctx), &s3.CopyObjectInput{
		Bucket: aws.String(db), Key: aws.String(dk), CopySource: aws.String(sb + "/" + escapeKeyPath(sk)),
	})
	var apiErr interface{ ErrorCode() string }
	switch {
	case err == nil:
		return true, false, nil
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchKey":
		return false, true, nil
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRequest":
		return false, false, nil // over 5 GiB: streamed
	}
	return false, false, fmt.Errorf("server-side copy: %w", err)
}

// escapeKeyPath URL-encodes a key for x-amz-copy-source, segment by
// segment (the '/' between them stays).
func escapeKeyPath(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

func splitS3(loc string) (bucket, key string, ok bool) {
	scheme, rest, found := strings.Cut(loc, "://")
	if !found || (scheme != "s3" && scheme != "s3a" && scheme != "s3n") {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, key != ""
}

// streamCopy copies src to dst through icewright (read, then write).
func streamCopy(ctx context.Context, fs iceio.IO, src, dst string, gone *bool) error {
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", fs)
	}
	in, err := fs.Open(src)
	if err != nil {
		if store.IsNotExist(err) {
			*gone = true
			return nil
		}
		return err
	}
	defer in.Close()
	if err := bound.BreakerOf(ctx).Err(); err != nil {
		return err
	}
	return copyTo(wfs, in, dst)
}

func copyTo(wfs iceio.WriteFileIO, in io.Reader, dst string) error {
	out, err := wfs.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// errSymlink marks a path with a symbolic link in it.
var errSymlink = errors.New("symbolic link, not followed")

// localLstat checks every component of p below root with Lstat (root
// itself is not checked: it is the table's location or write path) and
// returns the last one's info. A symbolic link anywhere is errSymlink; a
// missing component is an fs.ErrNotExist error.
func localLstat(root, p string) (iofs.FileInfo, error) {
	lr, okR := store.LocalPath(root)
	lp, okP := store.LocalPath(p)
	if !okR || !okP {
		return nil, fmt.Errorf("%s is not a local path below %s", p, root)
	}
	rel, err := filepath.Rel(lr, lp)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is not below %s", p, root)
	}
	cur := lr
	var st iofs.FileInfo
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		if st, err = os.Lstat(cur); err != nil {
			return nil, err
		}
		if st.Mode()&iofs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", cur, errSymlink)
		}
	}
	return st, nil
}

// localMkdirNoLink creates dir below root like MkdirAll, but refuses a
// symbolic link or a non-directory at any component instead of following
// it.
func localMkdirNoLink(root, dir string) error {
	lr, _ := store.LocalPath(root)
	ld, ok := store.LocalPath(dir)
	if !ok {
		return fmt.Errorf("%s is not local", dir)
	}
	rel, err := filepath.Rel(lr, ld)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not below %s", dir, root)
	}
	if rel == "." {
		return nil
	}
	cur := lr
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, iofs.ErrNotExist) {
			if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, iofs.ErrExist) {
				return err
			}
			if st, err = os.Lstat(cur); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if st.Mode()&iofs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w", cur, errSymlink)
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory", cur)
		}
	}
	return nil
}

// presence reports whether p (below root) exists. Only "not found" is
// absence: any other error (a 503, a timeout, a symbolic link on the way)
// is returned, and the caller must treat the file as possibly there.
func presence(fs iceio.IO, root, p string) (bool, error) {
	if _, ok := store.LocalPath(p); ok {
		_, err := localLstat(root, p)
		if err == nil {
			return true, nil
		}
		if store.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	f, err := fs.Open(p)
	if err != nil {
		if store.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	_ = f.Close()
	return true, nil
}

// removeQuarantineFile removes p (below the table location loc), never
// through a symbolic link.
func removeQuarantineFile(fs iceio.IO, loc, p string) error {
	if l, ok := store.LocalPath(p); ok {
		if _, err := localLstat(loc, p); err != nil {
			return err
		}
		return os.Remove(l)
	}
	return fs.Remove(p)
}

// writeQuarantineManifest writes the manifest of a run of the table at loc
// (locally: atomically, never through a symbolic link).
func writeQuarantineManifest(fs iceio.IO, loc, p string, m QuarantineManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if l, ok := store.LocalPath(p); ok {
		if err := localMkdirNoLink(loc, path.Dir(p)); err != nil {
			return err
		}
		tmp := l + ".tmp"
		if err := os.Remove(tmp); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		// O_EXCL: never write through a link someone left at tmp.
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
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

// readQuarantineManifestRaw reads the manifest of a run of the table at loc
// and also returns its bytes, whose digest pins a planned purge to the
// manifest the reviewer saw. Locally no symbolic link is followed.
func readQuarantineManifestRaw(fs iceio.IO, loc, p string) (QuarantineManifest, []byte, error) {
	var m QuarantineManifest
	var b []byte
	var err error
	if l, ok := store.LocalPath(p); ok {
		if _, err = localLstat(loc, p); err == nil {
			b, err = os.ReadFile(l)
		}
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
// manifest is data on storage; a run may only delete inside itself), or a
// file that came from another engine's staging directory (moved by an
// icewright without that rule; staged gives the directory, stagingRule): the
// sweep never deletes such a file, so neither does the purge.
func runProblem(dir string, m QuarantineManifest, tableUUID string, staged func(original string) string) string {
	if m.TableUUID != tableUUID {
		return "written for another table (uuid " + m.TableUUID + ")"
	}
	var stray, foreign []string
	for _, f := range m.Files {
		if !insideRun(dir, f.Quarantined) {
			stray = append(stray, f.Quarantined)
		}
		if staged != nil && staged(f.Original) != "" {
			foreign = append(foreign, f.Original)
		}
	}
	if len(stray) > 0 {
		return "manifest names files outside the run (" + strings.Join(stray, ", ") + ")"
	}
	if len(foreign) > 0 {
		return "it holds files moved out of other engines' staging directories (" + strings.Join(foreign, ", ") + "), which are not the table's; put them back with icewright restore"
	}
	return ""
}

// scanQuarantine reports the table's quarantine runs from their manifests
// alone (one read each; the quarantined files are not listed). Nothing here
// is fatal: a run whose manifest cannot be read (or that has none: a
// directory below the quarantine without a manifest holds files no icewright
// command would otherwise see) is reported with the problem, and is never
// due.
//
// missing, when set, tells the referenced files the listing lacked
// (OrphanScan.MissingReferenced): a run holding one of them holds live
// data, and says so.
func scanQuarantine(fs iceio.IO, location, tableUUID string, missing func(original string) bool, staged func(original string) string) []diff.QuarantineRun {
	runs, err := quarantineRuns(fs, location)
	if err != nil {
		return []diff.QuarantineRun{{Problem: "list " + QuarantineDir + ": " + err.Error()}}
	}
	qroot := quarantineRoot(location)
	var out []diff.QuarantineRun
	for _, r := range runs {
		dir := qroot + "/" + r.name
		qr := diff.QuarantineRun{RunID: r.name}
		if r.problem != "" {
			qr.Problem = r.problem
			out = append(out, qr)
			continue
		}
		m, raw, err := readQuarantineManifestRaw(fs, location, dir+"/"+QuarantineManifestName)
		switch {
		case err != nil && store.IsNotExist(err):
			qr.Problem = "no manifest (" + QuarantineManifestName + "): its files cannot be restored or purged by icewright"
			out = append(out, qr)
			continue
		case err != nil:
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
		qr.Problem = runProblem(dir, m, tableUUID, staged)
		qr.Referenced = live
		out = append(out, qr)
	}
	return out
}

// quarantineRun is one entry below a table's quarantine directory.
type quarantineRun struct {
	name    string
	problem string // set when the entry is no run directory icewright can read
}

// quarantineRuns lists the entries below a table's quarantine: every run
// directory, with or without a manifest (a run whose manifest was lost
// still holds files), and, locally, a symbolic link in place of a run
// (reported, never followed).
func quarantineRuns(fs iceio.IO, location string) ([]quarantineRun, error) {
	qroot := quarantineRoot(location)
	if l, ok := store.LocalPath(qroot); ok {
		st, err := localLstat(location, qroot)
		if store.IsNotExist(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", qroot)
		}
		ents, err := os.ReadDir(l)
		if err != nil {
			return nil, err
		}
		var out []quarantineRun
		for _, e := range ents {
			switch {
			case e.Type()&iofs.ModeSymlink != 0:
				out = append(out, quarantineRun{name: e.Name(), problem: "a symbolic link, not a run directory (not followed)"})
			case e.IsDir():
				out = append(out, quarantineRun{name: e.Name()})
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
		if d.IsDir() && path.Base(p) != QuarantineDir {
			if path.Base(path.Dir(p)) == QuarantineDir {
				seen[path.Base(p)] = true
			}
			return iofs.SkipDir // below a run: its manifest is all we read
		}
		return nil
	})
	if err != nil && !store.IsNotExist(err) {
		return nil, err
	}
	var out []quarantineRun
	for k := range seen {
		out = append(out, quarantineRun{name: k})
	}
	slices.SortFunc(out, func(a, b quarantineRun) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// purgeResult is what purging a table's planned quarantine runs did.
type purgeResult struct {
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
// norm is the sweep's path normaliser (the policy's equal_schemes and
// equal_authorities): a reference spelled with an alias of an original path
// must keep the run, exactly as it keeps the file in the sweep itself.
func purgeQuarantine(ctx context.Context, fs iceio.IO, tbl *table.Table, now time.Time, planned []diff.PurgeRun, del deleter, norm func(string) string, literal func(string) (string, bool)) purgeResult {
	var pr purgeResult
	dues := dueRuns(fs, tbl, now, planned, norm, &pr)
	if len(dues) == 0 {
		return pr
	}
	if del.set.Concurrency <= 0 {
		// A purge is never urgent: one request at a time (one batch, or
		// one delete on a store without a batch API) unless set.
		del.set.Concurrency = 1
	}
	// The table must not reference any original path: were a slow writer
	// to have committed one, the quarantined copy is the only copy left.
	refd := map[string]bool{}
	for _, d := range dues {
		for _, f := range d.m.Files {
			refd[norm(f.Original)] = false
		}
	}
	if err := markReferenced(ctx, fs, tbl, refd, norm, literal); err != nil {
		pr.Errors = append(pr.Errors, "referenced set (nothing purged): "+err.Error())
		return pr
	}
	for _, d := range dues {
		var live []string
		for _, f := range d.m.Files {
			if refd[norm(f.Original)] {
				live = append(live, f.Original)
			}
		}
		if len(live) > 0 {
			pr.Kept = append(pr.Kept, fmt.Sprintf("%s: the table references %s again; run icewright restore %s with this table's address", path.Base(d.dir), strings.Join(live, ", "), path.Base(d.dir)))
			continue
		}
		purgeRun(fs, tbl, d, del, &pr)
	}
	return pr
}

// dueRun is a planned quarantine run found as planned and due.
type dueRun struct {
	dir string
	m   QuarantineManifest
}

// dueRuns are the planned runs whose manifest is still the one planned,
// that are due at now and have no problem (another table's, files outside
// the run, inside a staging directory); each other is kept in pr with its
// reason, or an error when its manifest cannot be read.
func dueRuns(fs iceio.IO, tbl *table.Table, now time.Time, planned []diff.PurgeRun, norm func(string) string, pr *purgeResult) []dueRun {
	qroot := quarantineRoot(tbl.Location())
	uuid := tbl.Metadata().TableUUID().String()
	rule := newStagingRule(tbl.Metadata(), norm)
	var dues []dueRun
	for _, r := range planned {
		if !validRunID(r.RunID) {
			pr.Kept = append(pr.Kept, fmt.Sprintf("%q: not a run id, nothing purged", r.RunID))
			continue
		}
		dir := qroot + "/" + r.RunID
		m, raw, err := readQuarantineManifestRaw(fs, tbl.Location(), dir+"/"+QuarantineManifestName)
		switch {
		case err != nil && store.IsNotExist(err):
			pr.Kept = append(pr.Kept, r.RunID+": its manifest is gone since the plan (restored or removed), nothing purged")
		case err != nil:
			// Planned, and not done: the action fails.
			pr.Errors = append(pr.Errors, r.RunID+": manifest unreadable, run kept: "+err.Error())
		case manifestDigest(raw) != r.ManifestDigest:
			pr.Kept = append(pr.Kept, r.RunID+": manifest changed since the plan, kept; run icewright plan again")
		case m.PurgeAfter.IsZero() || now.Before(m.PurgeAfter):
			pr.Kept = append(pr.Kept, r.RunID+": not due, kept")
		default:
			if why := runProblem(dir, m, uuid, func(p string) string { return rule.stagingDir(norm(p)) }); why != "" {
				pr.Kept = append(pr.Kept, r.RunID+": "+why+", kept")
				continue
			}
			dues = append(dues, dueRun{dir, m})
		}
	}
	return dues
}

// purgeRun deletes one due run's files, then its manifest, and counts
// them in pr; a file not deleted keeps the manifest, so the rest is found
// next time.
func purgeRun(fs iceio.IO, tbl *table.Table, d dueRun, del deleter, pr *purgeResult) {
	var (
		mu     sync.Mutex
		failed bool
		files  = make([]fileRef, len(d.m.Files))
		sizes  = map[string]int64{}
	)
	for i, f := range d.m.Files {
		files[i] = fileRef{path: f.Quarantined, size: f.Size}
		sizes[f.Quarantined] = f.Size
	}
	fail := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		pr.Errors = append(pr.Errors, line)
		failed = true
	}
	// Interrupted, or the store judged unresponsive: no new batch (no
	// new delete on a store without one) starts, and every file left
	// is named (still in the run).
	del.run(files, func(fileRef) string { return tbl.Location() }, func(f fileRef) bool {
		// Right before its batch is sent. Only "not found" is
		// absence: a copy that could not be looked at keeps the
		// manifest, so no file is ever left unlisted.
		there, err := presence(fs, tbl.Location(), f.path)
		if err != nil {
			fail(fmt.Sprintf("%s: not purged: %v", f.path, err))
		}
		return there && err == nil
	}, func(f fileRef) {
		pr.Files++
		pr.Bytes += max(f.size, 0)
	}, func(f fileRef, err error, started bool) {
		switch {
		case !started:
			fail(fmt.Sprintf("%s: not purged, still in the quarantine: not started: %v", f.path, err))
		case bound.Unanswered(err):
			fail(fmt.Sprintf("%s: place unknown: its delete got no answer, it may be gone or still in the quarantine: %v", f.path, err))
		default:
			fail(fmt.Sprintf("%s: not purged: %v", f.path, err))
		}
	})
	if failed {
		return // the manifest stays, so the rest is found next time
	}
	if _, err := presence(fs, tbl.Location(), d.dir+"/"+QuarantineManifestName); err != nil {
		pr.Errors = append(pr.Errors, fmt.Sprintf("%s: manifest kept: %v", d.dir, err))
		return
	}
	if err := del.removeOne(tbl.Location(), d.dir+"/"+QuarantineManifestName); err != nil && !store.IsNotExist(err) {
		pr.Errors = append(pr.Errors, fmt.Sprintf("%s: %v", d.dir, err))
		return
	}
	if l, ok := store.LocalPath(d.dir); ok {
		removeEmptyDirs(l)
	}
	pr.Runs = append(pr.Runs, path.Base(d.dir))
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
// the metadata log, the current metadata and version-hint). refd's keys
// are normalised by norm.
func markReferenced(ctx context.Context, fs iceio.IO, tbl *table.Table, refd map[string]bool, norm func(string) string, literal func(string) (string, bool)) error {
	md := tbl.Metadata()
	mark := func(p string) {
		k := norm(p)
		if _, ok := refd[k]; ok {
			refd[k] = true
		}
		// A file: URI that names two local files references both
		// (orphanLiteral).
		if lit, ok := literal(p); ok {
			if _, ok := refd[lit]; ok {
				refd[lit] = true
			}
		}
	}
	err := reach.Walk(ctx, reach.Spec{Meta: md, FS: fs, Snapshots: reach.AllSnapshots(md), Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
		mark(f.Path)
		return nil
	}}}})
	if err != nil {
		return err
	}
	mark(tbl.MetadataLocation())
	for e := range md.PreviousFiles() {
		mark(e.MetadataFile)
	}
	mark(strings.TrimSuffix(md.Location(), "/") + "/metadata/version-hint.text")
	return nil
}

// Restore moves every file of one quarantine run of the table at address
// (load loads it, with the storage limits in ctx) back to its original
// path. It never overwrites: a file that exists at the
// original path is refused and its quarantined copy stays, unless the two
// are the same file (a restore or a move that was interrupted between its
// copy and its delete), when the quarantined copy is dropped.
//
// Only "not found" means absent: a copy or a path that cannot be looked at
// (a 503, a timeout, a symbolic link) is refused and the manifest is kept.
// The manifest is removed only when every file it lists has been verified
// back at its original path and gone from the run.
func Restore(ctx context.Context, address, runID string, load func(context.Context) (*table.Table, error)) (diff.RestoreResult, error) {
	res := diff.RestoreResult{RunID: runID}
	if !validRunID(runID) {
		return res, fmt.Errorf("invalid quarantine run id %q", runID)
	}
	tbl, err := load(ctx)
	if err != nil {
		return res, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("open table storage: %w", err)
	}
	loc := tbl.Location()
	runDir := quarantineRoot(loc) + "/" + runID
	manPath := runDir + "/" + QuarantineManifestName
	m, _, err := readQuarantineManifestRaw(fs, loc, manPath)
	if err != nil {
		if store.IsNotExist(err) {
			return res, fmt.Errorf("%s has no quarantine run %q", address, runID)
		}
		return res, fmt.Errorf("read quarantine manifest: %w", err)
	}
	if m.TableUUID != "" && m.TableUUID != tbl.Metadata().TableUUID().String() {
		return res, fmt.Errorf("%w: quarantine run %s belongs to table uuid %s, not %s", store.ErrRefused, runID, m.TableUUID, tbl.Metadata().TableUUID())
	}
	roots := sweepRoots(loc, tbl.Properties(), store.NormPath)
	for _, f := range m.Files {
		switch outcome, why := restoreOne(ctx, fs, loc, runDir, roots, f); outcome {
		case restoreRefused:
			res.Refused = append(res.Refused, f.Original+": "+why)
		case restoreDone:
			res.Restored = append(res.Restored, f)
			res.Bytes += max(f.Size, 0)
		case restoreNotHeld:
			res.NotHeld = append(res.NotHeld, f.Original)
		}
	}
	if n := len(res.Refused); n > 0 {
		res.ManifestKept = fmt.Sprintf("%d files are not back in place; the manifest stays, so that restore can be run again", n)
		return res, nil
	}
	if err := removeQuarantineFile(fs, loc, manPath); err != nil && !store.IsNotExist(err) {
		res.ManifestKept = "every file is back in place, but the manifest could not be removed: " + err.Error()
		return res, nil
	}
	if l, ok := store.LocalPath(runDir); ok {
		removeEmptyDirs(l)
	}
	return res, nil
}

// restoreOutcome is what restoreOne did with one file of a run.
type restoreOutcome int

const (
	restoreRefused     restoreOutcome = iota // not put back: see why
	restoreDone                              // moved back and verified
	restoreAlreadyBack                       // at its original path already (never moved, or an earlier restore)
	restoreNotHeld                           // in neither place and never moved: the run did not hold it
)

// restoreOne puts one file of the run in runDir back at its original
// path, never overwriting, and verifies it is there and gone from the
// run; why says why it was refused.
func restoreOne(ctx context.Context, fs iceio.IO, loc, runDir string, roots []string, f diff.QuarantinedFile) (restoreOutcome, string) {
	// Interrupted, or the store judged unresponsive: no new move.
	if err := bound.Stop(ctx); err != nil {
		return restoreRefused, "not started: " + err.Error()
	}
	// The manifest is data on storage: never let it send a file outside
	// the table's locations, or take one from outside the run.
	root := plainRootOf(roots, f.Original)
	if root == "" {
		return restoreRefused, "outside the table's locations"
	}
	if !insideRun(runDir, f.Quarantined) {
		return restoreRefused, "quarantined path " + f.Quarantined + " is not inside the run"
	}
	q, err := presence(fs, loc, f.Quarantined)
	if err != nil {
		return restoreRefused, "the quarantined copy could not be checked: " + err.Error()
	}
	o, err := presence(fs, root, f.Original)
	if err != nil {
		return restoreRefused, "the original path could not be checked: " + err.Error()
	}
	switch {
	case q && o:
		same, err := sameContent(fs, loc, root, f.Quarantined, f.Original)
		switch {
		case err != nil:
			return restoreRefused, "a file exists there, and it could not be compared with the quarantined copy: " + err.Error()
		case !same:
			return restoreRefused, "a file exists there; not overwritten"
		}
		// The same file in both places: only the quarantined copy goes.
		if err := removeQuarantineFile(fs, loc, f.Quarantined); err != nil && !store.IsNotExist(err) {
			return restoreRefused, "back in place, but its quarantined copy could not be removed: " + err.Error()
		}
	case q:
		if err := restoreMove(fs, loc, root, f.Quarantined, f.Original); err != nil {
			return restoreRefused, err.Error()
		}
	case o:
		// Never moved, or put back by an earlier restore that could
		// not finish: it is at Original.
		return restoreAlreadyBack, ""
	case f.Moved:
		return restoreRefused, "the quarantined copy is missing, and the file is not at its original path either"
	default:
		return restoreNotHeld, ""
	}
	// Verified, not assumed: the file is at Original and gone from the
	// run.
	o, oerr := presence(fs, root, f.Original)
	q, qerr := presence(fs, loc, f.Quarantined)
	if err := errors.Join(oerr, qerr); err != nil || !o || q {
		return restoreRefused, fmt.Sprintf("moved back, but not verified (at the original path: %t, in the run: %t, %v)", o, q, err)
	}
	return restoreDone, ""
}

// validRunID: a run id names one directory below the quarantine, never a
// path.
func validRunID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\")
}

// insideRun reports whether p lies strictly inside the run directory,
// with no ".." that could lead out of it.
func insideRun(runDir, p string) bool {
	n := store.NormPath(p)
	return strings.HasPrefix(n, store.NormPath(runDir)+"/") && !strings.Contains(n, "/../") && !strings.HasSuffix(n, "/..")
}

// restoreMove moves the quarantined copy q (below the table location loc)
// back to o (below root), never replacing a file at o and never through a
// symbolic link. Locally it is a hard link then an unlink, which is atomic
// about an occupied o; on an object store a copy and a delete (the caller
// checked that o was free).
func restoreMove(fs iceio.IO, loc, root, q, o string) error {
	lq, okQ := store.LocalPath(q)
	lo, okO := store.LocalPath(o)
	if okQ && okO {
		st, err := localLstat(loc, q)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", q)
		}
		if err := localMkdirNoLink(root, path.Dir(o)); err != nil {
			return err
		}
		if err := os.Link(lq, lo); err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return errors.New("a file exists there; not overwritten")
			}
			return err
		}
		return os.Remove(lq)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", fs)
	}
	in, err := fs.Open(q)
	if err != nil {
		return fmt.Errorf("read the quarantined copy: %w", err)
	}
	defer in.Close()
	if err := copyTo(wfs, in, o); err != nil {
		return fmt.Errorf("copy back: %w", err)
	}
	if err := fs.Remove(q); err != nil && !store.IsNotExist(err) {
		return fmt.Errorf("copied back, but the quarantined copy could not be removed (restore again to finish): %w", err)
	}
	return nil
}

// sameContent reports whether a (below the table location loc) and b
// (below root) are the same file: one inode locally, or equal bytes.
func sameContent(fs iceio.IO, loc, root, a, b string) (bool, error) {
	if _, ok := store.LocalPath(a); ok {
		sa, err := localLstat(loc, a)
		if err != nil {
			return false, err
		}
		sb, err := localLstat(root, b)
		if err != nil {
			return false, err
		}
		if os.SameFile(sa, sb) {
			return true, nil
		}
		if sa.Size() != sb.Size() || !sa.Mode().IsRegular() || !sb.Mode().IsRegular() {
			return false, nil
		}
	}
	fa, err := fs.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := fs.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		endA := ea == io.EOF || ea == io.ErrUnexpectedEOF
		endB := eb == io.EOF || eb == io.ErrUnexpectedEOF
		switch {
		case ea != nil && !endA:
			return false, ea
		case eb != nil && !endB:
			return false, eb
		case endA || endB:
			return endA && endB, nil
		}
	}
}

// quarantineProbe checks, at plan time, that the quarantine of the table at
// loc can be written and deleted in: it writes an empty object
// .icewright-quarantine/.icewright-probe-<random> and removes it (locally it also
// removes the quarantine directory again when the probe created it). The
// name starts with a dot, so it is no run directory; a probe left behind by
// a failed delete is reported by the refusal and harmless otherwise. This
// is the one write a plan makes, and only when the policy quarantines and
// there are orphans to move: a store that answers 403 there (a bucket
// policy, a read-only prefix) is refused in the plan instead of failing
// every move at apply.
func quarantineProbe(fs iceio.IO, loc string) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	qroot := quarantineRoot(loc)
	p := qroot + "/.icewright-probe-" + hex.EncodeToString(b[:])
	if l, ok := store.LocalPath(p); ok {
		_, statErr := localLstat(loc, qroot)
		created := store.IsNotExist(statErr)
		if err := localMkdirNoLink(loc, qroot); err != nil {
			return err
		}
		f, err := os.OpenFile(l, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			err = errors.Join(f.Close(), os.Remove(l))
		}
		if created {
			_ = os.Remove(filepath.Dir(l))
		}
		return err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", fs)
	}
	if err := wfs.WriteFile(p, nil); err != nil {
		return fmt.Errorf("write %s: %w", path.Base(p), err)
	}
	if err := fs.Remove(p); err != nil {
		return fmt.Errorf("delete %s: %w", path.Base(p), err)
	}
	return nil
}
