package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// The steps the executors of several kinds share: how a snapshot-adding
// action starts (RewriteStart), pins main (PinRefs), finds and removes
// what a failed commit staged (StagedFiles, RemoveStaged, Recording,
// FailedCommit, RemoveLeaked), classifies a commit's error (ClassifyErr)
// and reads the totals a result shows (SummaryTotals, DeleteFilesOf).

// HeadIDRefusal refuses an executor that adds a snapshot on a main head
// whose id iceberg-go v0.7.0 takes for "no parent" (diff.HeadIDProblem, which
// the plan refuses too): a saved plan applied to such a table stops here.
func HeadIDRefusal(tbl *table.Table) error {
	// iceberg-go parents a commit on main on the current snapshot.
	var head *int64
	if cur := tbl.CurrentSnapshot(); cur != nil {
		head = &cur.SnapshotID
	}
	if why := diff.HeadIDProblem(head); why != "" {
		return fmt.Errorf("%w: %s", store.ErrRefused, why)
	}
	return nil
}

// RewriteStart is how every executor that adds a snapshot on main's head
// begins: the result names the metadata it started from, a table without a
// snapshot is nothing to do, and a head iceberg-go would take for "no
// parent" is refused (HeadIDRefusal). stop says the caller returns res and
// err as they are.
func RewriteStart(tbl *table.Table) (res store.Result, stop bool, err error) {
	res = store.Result{MetadataLocation: tbl.MetadataLocation()}
	if tbl.CurrentSnapshot() == nil {
		res.NoOp, res.Note = true, "table has no snapshot"
		return res, true, nil
	}
	return res, false, HeadIDRefusal(tbl)
}

// PinRefs asserts, on a transaction, that main has not moved since tbl was
// loaded. With an explicit assertion iceberg-go fails the commit instead of
// silently refreshing and replaying it onto a newer head: icewright re-plans
// instead, so it never commits something the plan did not consider.
func PinRefs(txn *table.Transaction) error {
	if err := txn.AssertRefSnapshotID(table.MainBranch); err != nil {
		return fmt.Errorf("assert main unchanged: %w", err)
	}
	return nil
}

// StagedFiles lists the files a staged (not yet committed) transaction wrote
// for snapshots that base does not have: their manifest lists and the
// manifests they added. These are the files to remove when the commit
// definitely failed (iceberg-go leaks them). A manifest rewrite, its one
// user, writes no data or delete file; one that a staged snapshot says it
// added is not icewright's (a producer's bug, which the commit check reports)
// and is never listed for removal.
func StagedFiles(ctx context.Context, fs iceio.IO, base, staged table.Metadata) ([]string, error) {
	known := map[int64]bool{}
	for _, s := range base.Snapshots() {
		known[s.SnapshotID] = true
	}
	var added []int64
	for _, s := range staged.Snapshots() {
		if !known[s.SnapshotID] {
			added = append(added, s.SnapshotID)
		}
	}
	isNew := func(id int64) bool { return slices.Contains(added, id) }
	var out []string
	err := reach.Walk(ctx, reach.Spec{Meta: staged, FS: fs, Snapshots: added, Consumers: []reach.Consumer{{File: func(f reach.File) error {
		switch {
		case f.Category == reach.CategoryManifestList:
			out = append(out, f.Path)
		case f.Category == reach.CategoryManifest:
			if isNew(f.Snapshot) {
				out = append(out, f.Path)
			} // else carried over from an older snapshot
			return reach.SkipEntries
		}
		return nil // statistics: iceberg-go's transactions write none
	}}}})
	if err != nil {
		return out, fmt.Errorf("read staged files: %w", err)
	}
	return out, nil
}

// RemoveStaged deletes files a definitely failed commit wrote. Errors are
// collected, not fatal: the files are unreferenced either way.
func RemoveStaged(fs iceio.IO, paths []string) (removed int, errs []string) {
	for _, p := range paths {
		if err := fs.Remove(p); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		removed++
	}
	return removed, errs
}

// ClassifyErr: the engine removes staged files itself when a commit
// definitely failed and says "outcome unknown" when it kept them. Conflicts
// become store.ErrConflict (apply reloads and retries); an unknown outcome
// store.ErrCommitUnknown; anything else (a read or write error, a refusal, a row
// mismatch) stays as it is.
func ClassifyErr(err error) error {
	switch {
	case strings.Contains(err.Error(), "outcome unknown"):
		return fmt.Errorf("%w: %w", store.ErrCommitUnknown, err)
	case errors.Is(err, table.ErrCommitFailed), errors.Is(err, table.ErrCommitDiverged),
		errors.Is(err, table.ErrConflictingDeleteFiles), strings.Contains(strings.ToLower(err.Error()), "requirement failed"):
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	case errors.Is(err, compaction.ErrRefused):
		return fmt.Errorf("%w: %w", store.ErrRefused, err)
	}
	return err
}

// SummaryTotals is the table's live data files and their bytes, the files
// the plan counts a compaction's input in (data files at their
// file_size_in_bytes): the current snapshot's total-data-files, and its
// total-files-size less what it counts for the live delete files
// (reach.SummarySize), which only the delete manifests are read for (none
// when the summary counts no delete file). The bytes are 0 (not shown)
// when the delete manifests cannot be read.
func SummaryTotals(ctx context.Context, tbl *table.Table) (files, bytes int64) {
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0, 0
	}
	files, _ = strconv.ParseInt(s.Summary.Properties["total-data-files"], 10, 64)
	bytes, _ = strconv.ParseInt(s.Summary.Properties["total-files-size"], 10, 64)
	if n, _ := strconv.ParseInt(s.Summary.Properties["total-delete-files"], 10, 64); n == 0 {
		return files, bytes
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return files, 0
	}
	mans, err := s.Manifests(fsys)
	if err != nil {
		return files, 0
	}
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return files, 0
		}
		for _, e := range entries {
			bytes -= reach.SummarySize(e.DataFile())
		}
	}
	return files, max(bytes, 0)
}

// RecordingIO remembers every file written through it. iceberg-go writes a
// rewrite's manifests and manifest list through the table's IO and leaves
// them behind when the commit fails; the engine removes the data files it
// wrote, and the rest is found here.
type RecordingIO struct {
	iceio.WriteFileIO
	mu    sync.Mutex
	paths []string
}

func (r *RecordingIO) note(name string) {
	r.mu.Lock()
	r.paths = append(r.paths, name)
	r.mu.Unlock()
}

func (r *RecordingIO) Create(name string) (iceio.FileWriter, error) {
	r.note(name)
	return r.WriteFileIO.Create(name)
}

func (r *RecordingIO) WriteFile(name string, p []byte) error {
	r.note(name)
	return r.WriteFileIO.WriteFile(name, p)
}

// ReadFile keeps the fast path of IOs that have one.
func (r *RecordingIO) ReadFile(name string) ([]byte, error) {
	if rf, ok := r.WriteFileIO.(iceio.ReadFileIO); ok {
		return rf.ReadFile(name)
	}
	f, err := r.WriteFileIO.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (r *RecordingIO) Written() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// recording rebinds tbl to an IO that records writes.
func Recording(ctx context.Context, tbl *table.Table, cat table.CatalogIO) (*table.Table, *RecordingIO, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open table storage: %w", err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, nil, fmt.Errorf("table storage %T cannot write", fs)
	}
	rec := &RecordingIO{WriteFileIO: wfs}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (iceio.IO, error) { return rec, nil }, cat), rec, nil
}

// RemoveLeaked deletes files a definitely failed compaction wrote, after
// checking on the catalog's current metadata that no snapshot's manifest
// list is among them (if one were, the commit landed after all and nothing
// may go).
func RemoveLeaked(ctx context.Context, cat table.CatalogIO, tbl *table.Table, fs iceio.IO, props map[string]string, paths []string) (int, error) {
	if len(paths) == 0 {
		return 0, nil
	}
	mine := map[string]bool{}
	for _, p := range paths {
		mine[store.NormPath(p)] = true
	}
	cur, err := cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return 0, fmt.Errorf("verify before removing staged files (kept): %w", err)
	}
	for _, s := range cur.Metadata().Snapshots() {
		if mine[store.NormPath(s.ManifestList)] {
			return 0, fmt.Errorf("snapshot %d uses a file the failed compaction wrote; staged files kept", s.SnapshotID)
		}
	}
	// The one deletion path (objdel), one store per bucket; a file that
	// could not be removed is simply not counted, as before.
	n := 0
	_ = objdel.RunGrouped(ctx, paths, func(i int) string { return store.Storage(paths[i]) }, func(bucket string) (objdel.Store, error) {
		return objdel.ForIO(ctx, fs, props, bucket)
	}, objdel.Settings{}, objdel.Hooks{Done: func(_ int, err error) {
		if err == nil {
			n++
		}
	}})
	return n, nil
}

func OutputPaths(out *compaction.Result) []string {
	var ps []string
	if out != nil {
		for _, g := range out.Groups {
			ps = append(ps, g.OutputPaths...)
		}
	}
	return ps
}

func MinusPaths(a, b []string) []string {
	drop := map[string]bool{}
	for _, p := range b {
		drop[p] = true
	}
	var outp []string
	for _, p := range a {
		if !drop[p] {
			outp = append(outp, p)
		}
	}
	return outp
}

// FailedCommit classifies the error of a failed single-commit action
// (ClassifyErr) and, unless the commit's outcome is unknown (the
// catalog may now reference them), removes every file it wrote
// (res.StagedRemoved; a failed removal is res.Note).
func FailedCommit(ctx context.Context, cat table.CatalogIO, tbl *table.Table, rec *RecordingIO, props map[string]string, res *store.Result, err error) error {
	cerr := ClassifyErr(err)
	if !errors.Is(cerr, store.ErrCommitUnknown) {
		n, lerr := RemoveLeaked(context.WithoutCancel(ctx), cat, tbl, rec.WriteFileIO, props, rec.Written())
		res.StagedRemoved = n
		if lerr != nil {
			res.Note = lerr.Error()
		}
	}
	return cerr
}

// DeleteFilesOf is the snapshot summary's total-delete-files.
func DeleteFilesOf(tbl *table.Table) int64 {
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["total-delete-files"], 10, 64)
	return n
}
