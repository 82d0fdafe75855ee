package expiry

import (
	"context"
	"fmt"
	"slices"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// KeepLive is what an apply knew of the table before it changed anything:
// expiry never deletes a file that was live in Began's current snapshot,
// except one that a DELETED entry of a snapshot in Own (the snapshots this
// apply's own executors committed, e.g. its verified rewrite) removed. A
// file that another writer's commit released after the apply began waits
// for the next run, which sees that commit in its plan: the snapshots that
// still reach it are not expired this time (withhold), and should one be
// released anyway it is not deleted (hold) (docs/design.md §5.4).
type KeepLive struct {
	Began *table.Table
	Own   []int64
}

// othersCommitted reports whether main's history since Began holds a
// snapshot that is not one of Own (or main no longer descends from Began's
// head: a rollback). Only then can a file live at Began have been released
// by someone else; otherwise nothing more is read.
func (k *KeepLive) othersCommitted(meta table.Metadata) bool {
	if k == nil || k.Began == nil {
		return false
	}
	began := k.Began.Metadata().CurrentSnapshot()
	if began == nil {
		return false // nothing was live
	}
	for s := meta.CurrentSnapshot(); s != nil; {
		if s.SnapshotID == began.SnapshotID {
			return false
		}
		if !slices.Contains(k.Own, s.SnapshotID) || s.ParentSnapshotID == nil {
			return true
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return true
}

// protected fills a sorter with the files live in Began's current snapshot
// that no DELETED entry of an Own snapshot of base removed, under both keys
// of a file: URI with escapes (as releasedFiles keeps them).
func (k *KeepLive) protected(ctx context.Context, fs iceio.IO, base table.Metadata, limit int) (*reach.Sorter, error) {
	replaced := map[string]bool{}
	var own []int64
	for _, id := range k.Own {
		if base.SnapshotByID(id) != nil {
			own = append(own, id)
		}
	}
	// An own snapshot no longer in base (expired by someone else) is not
	// read: what it removed stays protected, which is safe.
	err := reach.Walk(ctx, reach.Spec{Meta: base, FS: fs, Snapshots: own, Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
		switch f.Category {
		case reach.CategoryManifest:
			if !slices.Contains(own, f.Snapshot) {
				return reach.SkipEntries // carried over: no own commit wrote entries there
			}
		case reach.CategoryData, reach.CategoryDelete:
			if f.Deleted && slices.Contains(own, f.Snapshot) {
				replaced[store.NormPath(f.Path)] = true
			}
		}
		return nil
	}}}})
	if err != nil {
		return nil, fmt.Errorf("files this apply's commits replaced: %w", err)
	}
	live := reach.NewSorter(limit)
	head := k.Began.Metadata().CurrentSnapshot()
	err = walk(ctx, fs, k.Began.Metadata(), []int64{head.SnapshotID}, false, func(f reach.File) error {
		if (f.Category != reach.CategoryData && f.Category != reach.CategoryDelete) || f.Deleted || replaced[store.NormPath(f.Path)] {
			return nil
		}
		if err := live.Add(reach.Rec{Key: store.NormPath(f.Path), Aux: f.Path}); err != nil {
			return err
		}
		if lit, ok := store.LiteralKey(f.Path); ok {
			return live.Add(reach.Rec{Key: lit, Aux: f.Path})
		}
		return nil
	})
	if err != nil {
		live.Close()
		return nil, fmt.Errorf("files live when the apply began (snapshot %d): %w", head.SnapshotID, err)
	}
	return live, nil
}

// withhold returns the snapshots of ids to keep this time, each with a file
// it reaches that was live when the apply began and that no snapshot
// staying in meta reaches any more: expiring it would release that file.
func (k *KeepLive) withhold(ctx context.Context, fs iceio.IO, meta table.Metadata, ids []int64, limit int) (map[int64]string, error) {
	live, err := k.protected(ctx, fs, meta, limit)
	if err != nil {
		return nil, err
	}
	defer live.Close()
	kept := reach.NewSorter(limit)
	defer kept.Close()
	var staying []int64
	for _, id := range reach.AllSnapshots(meta) {
		if !slices.Contains(ids, id) {
			staying = append(staying, id)
		}
	}
	err = walk(ctx, fs, meta, staying, false, func(f reach.File) error {
		if f.Category != reach.CategoryData && f.Category != reach.CategoryDelete {
			return nil
		}
		if err := kept.Add(reach.Rec{Key: store.NormPath(f.Path)}); err != nil {
			return err
		}
		if lit, ok := store.LiteralKey(f.Path); ok {
			return kept.Add(reach.Rec{Key: lit}) // as protected keys it
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("files the kept snapshots reach: %w", err)
	}
	// Few files in practice: those another writer released meanwhile.
	released := map[string]string{}
	err = unmatched(live, kept, func(r reach.Rec) error {
		released[r.Key] = r.Aux
		return nil
	})
	if err != nil || len(released) == 0 {
		return nil, err
	}
	listedBy := map[int][]int64{}
	why := map[int]string{}
	err = reach.Walk(ctx, reach.Spec{Meta: meta, FS: fs, Snapshots: ids, Consumers: []reach.Consumer{{
		Listed: func(m int, id int64) { listedBy[m] = append(listedBy[m], id) },
		File: func(f reach.File) error {
			if f.Category != reach.CategoryData && f.Category != reach.CategoryDelete {
				return nil
			}
			if p, ok := released[store.NormPath(f.Path)]; ok && why[f.Ordinal] == "" {
				why[f.Ordinal] = p
			}
			return nil
		}}}})
	if err != nil {
		return nil, fmt.Errorf("snapshots reaching files live when the apply began: %w", err)
	}
	out := map[int64]string{}
	for m, p := range why {
		for _, id := range listedBy[m] {
			out[id] = p
		}
	}
	return out, nil
}

// hold splits doomed into the files to delete and those that were live
// when the apply began (protected): the check after the commit, for a
// release withhold did not foresee.
func (k *KeepLive) hold(ctx context.Context, fs iceio.IO, base table.Metadata, doomed []fileRef, limit int) (del, held []fileRef, err error) {
	if len(doomed) == 0 {
		return doomed, nil, nil
	}
	live, err := k.protected(ctx, fs, base, limit)
	if err != nil {
		return nil, nil, err
	}
	defer live.Close()
	gone := reach.NewSorter(limit)
	defer gone.Close()
	for i, d := range doomed {
		if err := gone.Add(reach.Rec{Key: store.NormPath(d.path), N1: int64(i)}); err != nil {
			return nil, nil, err
		}
	}
	keep := make([]bool, len(doomed))
	for i := range keep {
		keep[i] = true
	}
	err = unmatched(gone, live, func(r reach.Rec) error {
		keep[r.N1] = false
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i, d := range doomed {
		if keep[i] {
			held = append(held, d)
		} else {
			del = append(del, d)
		}
	}
	return del, held, nil
}
