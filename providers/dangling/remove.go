package dangling

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is remove_dangling_deletes.
type Kind struct{}

var _ kind.Kind = Kind{}

// Types is remove_dangling_deletes.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.RemoveDanglingDeletes} }

// Observe finds the current snapshot's dangling delete files
// (compaction.FindDangling) when the policy declares dangling_deletes and
// the aggregate counted a delete file.
func (Kind) Observe(ctx context.Context, env *kind.Env, tbl *table.Table, st *diff.TableState) error {
	if !env.Policy.DanglingDeletes.Declared || st.Files.DeleteFiles == 0 || tbl.CurrentSnapshot() == nil {
		return nil
	}
	d, err := compaction.FindDangling(ctx, tbl)
	if err != nil {
		return fmt.Errorf("dangling deletes: %w", err)
	}
	st.DanglingDeletes = state(d)
	return nil
}

// Execute removes the dangling delete files of the table as it is now.
func (Kind) Execute(ctx context.Context, env *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	cat, props, err := env.CatalogAndStorage(ctx)
	if err != nil {
		return nil, store.Result{}, err
	}
	return Remove(ctx, req.Table, cat, props)
}

// state is the plan's view of what compaction.FindDangling found.
func state(d *compaction.Dangling) *diff.DanglingDeletes {
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

// Remove removes the dangling delete files of tbl's current
// snapshot from its metadata in one replace snapshot
// (compaction.RemoveDangling: the commit check holds it to exactly that
// change), or commits nothing when there are none (the table changed since
// the plan). The commit goes through cat and is not rebased: a commit that
// lost a race fails and leaves nothing, and apply plans again. Files
// iceberg-go wrote for a commit that definitely failed are removed.
func Remove(ctx context.Context, tbl *table.Table, cat table.CatalogIO, props map[string]string) (*table.Table, store.Result, error) {
	res, stop, err := kind.RewriteStart(tbl)
	if stop || err != nil {
		return tbl, res, err
	}
	res.FilesBefore = kind.DeleteFilesOf(tbl)
	rtbl, rec, err := kind.Recording(ctx, tbl, cat)
	if err != nil {
		return tbl, res, err
	}
	next, d, err := compaction.RemoveDangling(ctx, rtbl, compaction.Options{
		SnapshotProps: iceberg.Properties{"icewright.action": string(diff.RemoveDanglingDeletes)},
		Catalog:       cat,
		NoReplay:      true,
	})
	if err != nil {
		return tbl, res, fmt.Errorf("remove dangling deletes: %w", kind.FailedCommit(ctx, cat, tbl, rec, props, &res, err))
	}
	if len(d.Files) == 0 {
		res.NoOp, res.Note = true, "no dangling delete files"
		res.FilesAfter = res.FilesBefore
		return tbl, res, nil
	}
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	res.FilesAfter = kind.DeleteFilesOf(next)
	res.BytesBefore, res.BytesAfter = d.Bytes, 0
	if s := next.CurrentSnapshot(); s != nil {
		res.Snapshots = []int64{s.SnapshotID}
	}
	res.Note = fmt.Sprintf("%s removed (%s dropped, %d rewritten)", config.CountOf(len(d.Files), "dangling delete file", "dangling delete files"), config.CountOf(d.ManifestsDropped, "delete manifest", "delete manifests"), d.ManifestsRewritten)
	return next, res, nil
}
