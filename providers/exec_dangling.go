package providers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
)

// danglingState is the plan's view of what compaction.FindDangling found.
func danglingState(d *compaction.Dangling) *diff.DanglingDeletes {
	out := &diff.DanglingDeletes{
		DeleteFiles: len(d.Files), DeleteBytes: d.Bytes,
		PositionDeletes: d.PositionDeletes, EqualityDeletes: d.EqualityDeletes, DeletionVectors: d.DVs,
		ManifestsDropped: d.ManifestsDropped, ManifestsRewritten: d.ManifestsRewritten,
		SpecIDs: []int{},
	}
	seen := map[int]bool{}
	for _, f := range d.Files {
		if id := int(f.SpecID()); !seen[id] {
			seen[id] = true
			out.SpecIDs = append(out.SpecIDs, id)
		}
	}
	slices.Sort(out.SpecIDs)
	return out
}

// removeDanglingDeletes removes the dangling delete files of tbl's current
// snapshot from its metadata in one replace snapshot
// (compaction.RemoveDangling: the commit check holds it to exactly that
// change), or commits nothing when there are none (the table changed since
// the plan). The commit goes through cat and is not rebased: a commit that
// lost a race fails and leaves nothing, and apply plans again. Files
// iceberg-go wrote for a commit that definitely failed are removed.
func removeDanglingDeletes(ctx context.Context, tbl *table.Table, cat table.CatalogIO, props map[string]string) (*table.Table, ExecResult, error) {
	res, stop, err := rewriteStart(tbl)
	if stop || err != nil {
		return tbl, res, err
	}
	res.FilesBefore = deleteFilesOf(tbl)
	rtbl, rec, err := recording(ctx, tbl, cat)
	if err != nil {
		return tbl, res, err
	}
	next, d, err := compaction.RemoveDangling(ctx, rtbl, compaction.Options{
		SnapshotProps: iceberg.Properties{"icewright.action": string(diff.RemoveDanglingDeletes)},
		Catalog:       cat,
		NoReplay:      true,
	})
	if err != nil {
		return tbl, res, fmt.Errorf("remove dangling deletes: %w", failedCommit(ctx, cat, tbl, rec, props, &res, err))
	}
	if len(d.Files) == 0 {
		res.NoOp, res.Note = true, "no dangling delete files"
		res.FilesAfter = res.FilesBefore
		return tbl, res, nil
	}
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	res.FilesAfter = deleteFilesOf(next)
	res.BytesBefore, res.BytesAfter = d.Bytes, 0
	if s := next.CurrentSnapshot(); s != nil {
		res.Snapshots = []int64{s.SnapshotID}
	}
	res.Note = fmt.Sprintf("%s removed (%s dropped, %d rewritten)", config.CountOf(len(d.Files), "dangling delete file", "dangling delete files"), config.CountOf(d.ManifestsDropped, "delete manifest", "delete manifests"), d.ManifestsRewritten)
	return next, res, nil
}

// failedCommit classifies the error of a failed single-commit action
// (classifyCompactErr) and, unless the commit's outcome is unknown (the
// catalog may now reference them), removes every file it wrote
// (res.StagedRemoved; a failed removal is res.Note).
func failedCommit(ctx context.Context, cat table.CatalogIO, tbl *table.Table, rec *recordingIO, props map[string]string, res *ExecResult, err error) error {
	cerr := classifyCompactErr(err)
	if !errors.Is(cerr, ErrCommitUnknown) {
		n, lerr := removeLeaked(context.WithoutCancel(ctx), cat, tbl, rec.WriteFileIO, props, rec.written())
		res.StagedRemoved = n
		if lerr != nil {
			res.Note = lerr.Error()
		}
	}
	return cerr
}

// deleteFilesOf is the snapshot summary's total-delete-files.
func deleteFilesOf(tbl *table.Table) int64 {
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["total-delete-files"], 10, 64)
	return n
}
