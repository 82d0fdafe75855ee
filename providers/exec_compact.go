package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/iceops/iceops/diff"
)

// CompactSpec is what the compact action asks for at apply time. The groups
// are re-derived from the table's current files with the same selection rules
// diff used, so a table that changed since the plan is compacted as it is now.
type CompactSpec struct {
	Selection diff.CompactionSelection
	Strategy  string // binpack | sort
	// MaxBytes is compaction.max_bytes_per_run: groups in order, the first
	// always, later ones only while the total fits (as diff plans it).
	MaxBytes int64
	Progress ExecProgress
}

// Compact rewrites the selected small files with iceberg-go's compaction
// engine (table/compaction planning, ExecuteCompactionGroup per group) and
// commits one replace snapshot asserting main has not moved. Before the
// commit it checks that the rows written equal the live rows read; on a
// mismatch or a definite commit failure it removes every file it wrote.
func Compact(ctx context.Context, tbl *table.Table, spec CompactSpec) (*table.Table, ExecResult, error) {
	res := ExecResult{MetadataLocation: tbl.MetadataLocation()}
	if tbl.CurrentSnapshot() == nil {
		res.NoOp, res.Note = true, "table has no snapshot"
		return tbl, res, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return tbl, res, fmt.Errorf("open table storage: %w", err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return tbl, res, fmt.Errorf("plan files: %w", err)
	}
	for _, t := range tasks {
		res.FilesBefore++
		res.BytesBefore += t.File.FileSizeBytes()
	}
	sel := spec.Selection
	cfg := compaction.Config{
		TargetFileSizeBytes:  sel.Target,
		MinFileSizeBytes:     sel.Min,
		MaxFileSizeBytes:     sel.Max,
		MinInputFiles:        uint(max(sel.MinInputFiles, 1)),
		DeleteFileThreshold:  max(sel.DeleteFileThreshold, 1),
		DeleteRatioThreshold: sel.DeleteRatio,
		PackingLookback:      compaction.DefaultPackingLookback,
	}
	plan, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return tbl, res, fmt.Errorf("plan compaction: %w", err)
	}
	if len(plan.Groups) == 0 {
		res.NoOp, res.Note = true, "no files need compaction"
		res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
		return tbl, res, nil
	}
	if spec.MaxBytes > 0 {
		var kept []compaction.Group
		var total int64
		for _, g := range plan.Groups {
			if len(kept) > 0 && total+g.TotalSizeBytes > spec.MaxBytes {
				continue
			}
			kept = append(kept, g)
			total += g.TotalSizeBytes
		}
		if len(kept) < len(plan.Groups) {
			res.Note = fmt.Sprintf("%d groups left for a later run by max_bytes_per_run", len(plan.Groups)-len(kept))
		}
		plan.Groups = kept
	}
	if spec.Strategy == "sort" || spec.Strategy == "zorder" {
		// iceberg-go's writer does not sort; the replacement engine will.
		res.Note = strings.TrimPrefix(res.Note+"; "+spec.Strategy+" strategy ran as binpack: the current engine does not sort", "; ")
	}
	var totalBytes int64
	for _, g := range plan.Groups {
		totalBytes += g.TotalSizeBytes
	}

	var written []string // every data file we wrote, for cleanup
	cleanup := func() {
		n, _ := execRemoveStaged(fs, written)
		res.StagedRemoved += n
	}

	txn := tbl.NewTransaction()
	if err := execPinRefs(txn); err != nil {
		return tbl, res, err
	}
	rewrite := txn.NewRewrite(iceberg.Properties{"iceops.action": "compact"})
	var (
		rowsIn, rowsOut int64
		doneBytes       int64
		replaced        int64
		replacedBytes   int64
	)
	spec.Progress.report(0, totalBytes, "bytes")
	for _, g := range plan.Groups {
		if err := ctx.Err(); err != nil {
			cleanup()
			return tbl, res, fmt.Errorf("compaction interrupted before commit: %w", err)
		}
		group := table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
		in, err := execLiveRows(ctx, tbl, group.Tasks)
		if err != nil {
			cleanup()
			return tbl, res, fmt.Errorf("count input rows of group %q: %w", g.PartitionKey, err)
		}
		gr, err := table.ExecuteCompactionGroup(ctx, tbl, group, table.WithCompactionTargetFileSize(sel.Target))
		for _, df := range gr.NewDataFiles {
			written = append(written, df.FilePath())
		}
		if err != nil {
			cleanup()
			return tbl, res, fmt.Errorf("rewrite group %q: %w", g.PartitionKey, err)
		}
		var out int64
		for _, df := range gr.NewDataFiles {
			out += df.Count()
		}
		if out != in {
			cleanup()
			return tbl, res, fmt.Errorf("%w: group %q wrote %d rows but read %d live rows; nothing committed",
				ErrRefused, g.PartitionKey, out, in)
		}
		rowsIn += in
		rowsOut += out
		replaced += int64(len(gr.OldDataFiles))
		for _, df := range gr.OldDataFiles {
			replacedBytes += df.FileSizeBytes()
		}
		if len(gr.OldDataFiles) == 0 && len(gr.NewDataFiles) == 0 {
			continue
		}
		rewrite.ApplyResult(gr)
		doneBytes += g.TotalSizeBytes
		spec.Progress.report(doneBytes, totalBytes, "bytes")
	}
	res.RowsBefore, res.RowsAfter = rowsIn, rowsOut
	if err := rewrite.Commit(ctx); err != nil {
		cleanup()
		return tbl, res, fmt.Errorf("stage compaction: %w", err)
	}
	staged, err := txn.StagedTable()
	var snapFiles []string
	if err == nil {
		snapFiles, err = execStagedFiles(ctx, fs, tbl.Metadata(), staged.Metadata())
	}
	if err != nil {
		cleanup()
		return tbl, res, fmt.Errorf("inspect staged compaction: %w", err)
	}
	next, err := txn.Commit(context.WithoutCancel(ctx))
	if err != nil {
		cerr := execClassifyCommitErr(err)
		if errors.Is(cerr, ErrConflict) {
			cleanup()
			n, _ := execRemoveStaged(fs, execMinus(snapFiles, written))
			res.StagedRemoved += n
		} else {
			res.StagedKept = append(append(res.StagedKept, written...), execMinus(snapFiles, written)...)
		}
		return tbl, res, fmt.Errorf("commit compaction: %w", cerr)
	}
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	added := int64(len(written))
	addedBytes := execSumSizes(ctx, fs, written)
	res.FilesAfter = res.FilesBefore - replaced + added
	res.BytesAfter = res.BytesBefore - replacedBytes + addedBytes
	return next, res, nil
}

// execLiveRows counts the rows a group's tasks hold after their deletes. Without
// delete files it is the files' record counts; with them the tasks are read
// (one column), because only reading applies position and equality deletes.
func execLiveRows(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask) (int64, error) {
	var n int64
	var withDeletes []table.FileScanTask
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes = append(withDeletes, t)
			continue
		}
		n += t.File.Count()
	}
	if len(withDeletes) == 0 {
		return n, nil
	}
	_, recs, err := tbl.Scan().ReadTasks(ctx, withDeletes)
	if err != nil {
		return 0, err
	}
	for rec, err := range recs {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}

func execMinus(a, b []string) []string {
	drop := map[string]bool{}
	for _, p := range b {
		drop[p] = true
	}
	var out []string
	for _, p := range a {
		if !drop[p] {
			out = append(out, p)
		}
	}
	return out
}

func execSumSizes(ctx context.Context, fs iceio.IO, paths []string) int64 {
	var n int64
	for _, p := range paths {
		if ctx.Err() != nil {
			return n
		}
		f, err := fs.Open(p)
		if err != nil {
			continue
		}
		if st, err := f.Stat(); err == nil {
			n += st.Size()
		}
		_ = f.Close()
	}
	return n
}
