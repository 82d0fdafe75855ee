package manifests

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is rewrite_manifests. Its observation is the manifest counts the
// current snapshot's aggregate holds (diff.TableState.Manifests).
type Kind struct{}

var _ kind.Kind = Kind{}

// Types is rewrite_manifests.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.RewriteManifests} }

// Observe adds nothing: the aggregate counts the manifests.
func (Kind) Observe(context.Context, *kind.Env, *table.Table, *diff.TableState) error { return nil }

// Execute rewrites the manifests toward the approved target size.
func (Kind) Execute(ctx context.Context, _ *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	return Rewrite(ctx, req.Table, req.Actions[0].Manifests.TargetSize)
}

// Rewrite merges the current snapshot's manifests toward
// targetSize with iceberg-go's RewriteManifests and commits a replace
// snapshot asserting main has not moved. iceberg-go reports "already
// optimal" itself; then nothing is written. Before the commit is sent, the
// commit check (reach.CheckSnapshots with no change) requires the staged
// snapshot to hold exactly the current snapshot's live files; a difference
// removes the staged manifests and fails the action. The staged snapshot
// is the one sent: the assertion on main makes iceberg-go refuse a replay
// onto a moved head, and it rebuilds nothing while the head stays.
func Rewrite(ctx context.Context, tbl *table.Table, targetSize int64) (*table.Table, store.Result, error) {
	return rewriteTampered(ctx, tbl, targetSize, nil)
}

// tamperFunc changes a staged manifest rewrite before it is checked
// (tests only: the seam that shows the check stops a wrong snapshot).
type tamperFunc func(fs iceio.IO, staged table.Metadata) error

func rewriteTampered(ctx context.Context, tbl *table.Table, targetSize int64, tamper tamperFunc) (*table.Table, store.Result, error) {
	res, stop, err := kind.RewriteStart(tbl)
	if stop || err != nil {
		return tbl, res, err
	}
	cur := tbl.CurrentSnapshot()
	fs, err := tbl.FS(ctx)
	if err != nil {
		return tbl, res, fmt.Errorf("open table storage: %w", err)
	}
	mans, err := cur.Manifests(fs)
	if err != nil {
		return tbl, res, fmt.Errorf("read manifest list: %w", err)
	}
	res.FilesBefore = int64(len(mans))
	for _, m := range mans {
		res.BytesBefore += m.Length()
	}
	txn := tbl.NewTransaction()
	if err := kind.PinRefs(txn); err != nil {
		return tbl, res, err
	}
	var opts []table.RewriteManifestsOpt
	if targetSize > 0 {
		opts = append(opts, table.WithManifestTargetSize(targetSize))
	}
	if held := compaction.UnwritableSpecs(tbl); len(held) > 0 {
		// Their manifests cannot be written; the plan left them out too.
		opts = append(opts, table.WithRewriteManifestPredicate(func(m iceberg.ManifestFile) bool {
			_, ok := held[int(m.PartitionSpecID())]
			return !ok
		}))
	}
	rr, err := txn.RewriteManifests(ctx, opts...)
	if err != nil {
		return tbl, res, fmt.Errorf("rewrite manifests: %w", err)
	}
	if rr.IsNoOp() {
		res.NoOp, res.Note = true, "manifests already optimal: "+rr.NoOpReason.String()
		res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
		return tbl, res, nil
	}
	staged, err := txn.StagedTable()
	var written []string
	if err == nil && tamper != nil {
		err = tamper(fs, staged.Metadata())
	}
	if err == nil {
		written, err = kind.StagedFiles(ctx, fs, tbl.Metadata(), staged.Metadata())
	}
	if err != nil {
		return tbl, res, fmt.Errorf("inspect staged manifests: %w", err)
	}
	if err := reach.CheckSnapshots(ctx, fs, staged.Metadata(), cur.SnapshotID, staged.CurrentSnapshot().SnapshotID, reach.Change{}); err != nil {
		n, errs := kind.RemoveStaged(fs, written)
		res.StagedRemoved = n
		if len(errs) > 0 {
			res.StagedKept = written
			return tbl, res, fmt.Errorf("rewrite manifests (not committed; staged files not all removed: %s): %w", strings.Join(errs, "; "), err)
		}
		return tbl, res, fmt.Errorf("rewrite manifests (not committed, staged files removed): %w", err)
	}
	commitCtx, cancel := bound.Commit(ctx)
	next, err := txn.Commit(commitCtx)
	cancel()
	if err != nil {
		cerr := store.ClassifyCommit(err)
		if errors.Is(cerr, store.ErrConflict) {
			n, _ := kind.RemoveStaged(fs, written)
			res.StagedRemoved = n
		} else {
			res.StagedKept = written
		}
		return tbl, res, fmt.Errorf("commit manifests: %w", cerr)
	}
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	if s := next.CurrentSnapshot(); s != nil {
		res.Snapshots = []int64{s.SnapshotID}
		if after, err := s.Manifests(fs); err == nil {
			res.FilesAfter = int64(len(after))
			for _, m := range after {
				res.BytesAfter += m.Length()
			}
		}
	}
	return next, res, nil
}
