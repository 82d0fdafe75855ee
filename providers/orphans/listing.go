package orphans

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/meter"
)

// listWorkers is how many directories a local listing reads at once.
// Listing is readdir and lstat system calls, one per file; on a table of
// millions of files they are most of an orphan scan, and they overlap well.
const listWorkers = 4

// localFile is what walkLocal reports for one regular file.
type localFile struct {
	path  string
	size  int64
	mtime int64 // ms
}

// walkDir is one directory on walkLocal's stack; staging is the engine's
// staging directory it lies in (itself included), or "".
type walkDir struct{ path, staging string }

// stagingWalk is what walkLocal does with engine staging directories: dir
// says whether a directory is one (stagingRule.skips, on its local path),
// file gets each regular file below one, with the outermost such
// directory.
type stagingWalk struct {
	dir  func(p string) bool
	file func(top string, f localFile)
}

// walkLocal lists every regular file under root with listWorkers
// goroutines, with the guarantees filepath.WalkDir gave the scan:
//   - symbolic links are never followed: onSymlink gets each one (file or
//     directory), and nothing under a linked directory is listed;
//   - icewright's own directories (ownDir: the quarantine, the leases) are skipped;
//   - with stage set, a directory stage.dir names is an engine's staging
//     directory (stagingRule): its files go to stage.file, never to emit,
//     and what cannot be read below it is passed over;
//   - sockets, devices and pipes are ignored (never ours to delete);
//   - a file removed between readdir and lstat is skipped, but any other
//     error, including a directory that cannot be read, fails the whole
//     listing: a partial listing must never be compared with references;
//   - a root that does not exist is an empty listing.
//
// emit, onSymlink, stage.dir and stage.file are called from one goroutine
// at a time.
func walkLocal(ctx context.Context, root string, emit func(localFile) error, onSymlink func(p string), stage *stagingWalk) error {
	info, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a configured path with nothing written yet
	}
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		onSymlink(root)
		return nil
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() {
			return emit(localFile{root, info.Size(), info.ModTime().UnixMilli()})
		}
		return nil
	}
	w := &localWalk{ctx: ctx, emit: emit, onSymlink: onSymlink, stage: stage, stack: []walkDir{{path: root}}}
	w.cond = sync.NewCond(&w.mu)
	var workers sync.WaitGroup
	for range listWorkers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			w.work()
		}()
	}
	workers.Wait()
	return w.failed
}

// localWalk is one walkLocal: a stack of directories shared by the
// workers. A worker waits while the stack is empty and others may still
// push to it; the listing is complete when the stack is empty and no
// worker is reading.
type localWalk struct {
	ctx       context.Context
	emit      func(localFile) error
	onSymlink func(p string)
	stage     *stagingWalk

	mu     sync.Mutex // guards stack, active, failed; serialises emit and onSymlink
	cond   *sync.Cond
	stack  []walkDir
	active int
	failed error
}

// work pops directories and reads them until the walk is complete or
// failed.
func (w *localWalk) work() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.stack) == 0 && w.active > 0 && w.failed == nil {
			w.cond.Wait()
		}
		if w.failed != nil || len(w.stack) == 0 {
			return // failed, or complete (empty and nobody reading)
		}
		dir := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.active++
		w.mu.Unlock()
		err := w.readDir(dir)
		if dir.staging != "" && w.ctx.Err() == nil {
			// Not the table's: an engine's commit renames or
			// removes its staging directories while we list, and
			// a listing of the table must not fail for that.
			err = nil
		}
		w.mu.Lock()
		w.active--
		if err != nil && w.failed == nil {
			w.failed = err
		}
		if w.failed != nil || (w.active == 0 && len(w.stack) == 0) {
			w.cond.Broadcast()
		}
	}
}

// readDir reads one directory: its subdirectories go on the stack, its
// files to emit (or, in a staging directory, to stage.file), its links
// to onSymlink.
func (w *localWalk) readDir(wd walkDir) error {
	dir := wd.path
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(512)
		// Each page of a directory is a LIST of the action's actuals.
		meter.Of(w.ctx).Request(meter.List)
		for _, d := range entries {
			if err := w.entry(wd, d); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := w.ctx.Err(); err != nil {
			return err
		}
	}
}

// entry handles one entry of the directory wd.
func (w *localWalk) entry(wd walkDir, d fs.DirEntry) error {
	p := filepath.Join(wd.path, d.Name())
	switch t := d.Type(); {
	case t&fs.ModeSymlink != 0:
		if wd.staging == "" { // an engine's links are its own
			w.mu.Lock()
			w.onSymlink(p)
			w.mu.Unlock()
		}
	case d.IsDir():
		if ownDir(d.Name()) && wd.staging == "" {
			return nil // ours: the quarantine is reported from its manifests
		}
		sub := walkDir{path: p, staging: wd.staging}
		w.mu.Lock()
		if sub.staging == "" && w.stage != nil && w.stage.dir(p) {
			sub.staging = p
		}
		w.stack = append(w.stack, sub)
		w.cond.Signal()
		w.mu.Unlock()
	case t.IsRegular():
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while we listed
		}
		if err != nil {
			return err
		}
		lf := localFile{p, info.Size(), info.ModTime().UnixMilli()}
		w.mu.Lock()
		if wd.staging != "" {
			w.stage.file(wd.staging, lf)
		} else {
			err = w.emit(lf)
		}
		w.mu.Unlock()
		return err
	}
	return nil
}

// stagingRule is which directories below a sweep root the sweep never
// enters: other engines' staging directories. Hadoop's output committer
// writes a job's files under _temporary/, Hive under .hive-staging_*/,
// and each moves them into place when its job commits; a failed job
// leaves them, old enough to pass the age guard, yet they are that
// engine's, not the table's. Java Iceberg's DeleteOrphanFiles enters no
// directory whose name starts with "_" or "." unless it is the directory
// of a partition field so named ("_col=1/"), of any of the table's specs;
// the sweep keeps the same rule, and keeps it in one place: the listing
// (plan), apply's re-check of each planned path, and the quarantine purge
// all ask this type. A directory that is, or holds, the table's location
// or a write path is always entered: it is the table's by configuration.
type stagingRule struct {
	roots    []string // sweepRoots
	paths    []string // the location and every write path, as keys
	prefixes []string // "<name>=" of each partition field named "_..." or "..."
}

func newStagingRule(md table.Metadata, norm func(string) string) stagingRule {
	r := stagingRule{roots: sweepRoots(md.Location(), md.Properties(), norm)}
	for _, p := range tablePaths(md.Location(), md.Properties()) {
		r.paths = append(r.paths, rootKey(p, norm))
	}
	for _, spec := range md.PartitionSpecs() {
		for _, f := range spec.Fields() {
			if hidden(f.Name) {
				r.prefixes = append(r.prefixes, f.Name+"=")
			}
		}
	}
	slices.Sort(r.prefixes)
	r.prefixes = slices.Compact(r.prefixes)
	return r
}

func hidden(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

// skips reports whether the sweep leaves dir (a directory's key below a
// root) unentered.
func (r stagingRule) skips(dir string) bool {
	name := path.Base(dir)
	if !hidden(name) {
		return false
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(name, p) {
			return false // a partition directory of a field named "_x"
		}
	}
	for _, p := range r.paths {
		if underRoot(p, dir) {
			return false
		}
	}
	return true
}

// stagingDir is the outermost directory of key (a file's key) that the
// sweep does not enter, or "" when the sweep lists the file or key lies
// outside every root.
func (r stagingRule) stagingDir(key string) string {
	for _, root := range r.roots {
		rel, ok := strings.CutPrefix(key, root+"/")
		if !ok {
			continue
		}
		start := 0
		for i := range len(rel) {
			if rel[i] != '/' {
				continue
			}
			// Only a hidden name can be skipped: the common path builds
			// no string.
			if hidden(rel[start:i]) {
				if d := root + "/" + rel[:i]; r.skips(d) {
					return d
				}
			}
			start = i + 1
		}
		return ""
	}
	return ""
}

// maxStagingExamples bounds StagingSkip.Examples.
const maxStagingExamples = 5

// stagingReport counts what the listing left in staging directories.
type stagingReport struct {
	diff.StagingSkip
	last string // the last directory an object store's listing counted
}

func (s *stagingReport) dir(p string) {
	s.Dirs++
	i, found := slices.BinarySearch(s.Examples, p)
	if !found && i < maxStagingExamples {
		s.Examples = slices.Insert(s.Examples, i, p)
		s.Examples = s.Examples[:min(len(s.Examples), maxStagingExamples)]
	}
}

func (s *stagingReport) file(size int64) {
	s.Files++
	s.Bytes += max(size, 0)
}

// result is the report for the plan, nil when nothing was left.
func (s *stagingReport) result() *diff.StagingSkip {
	if s.Dirs == 0 && s.Files == 0 {
		return nil
	}
	out := s.StagingSkip
	return &out
}
