package providers

import (
	"context"
	"fmt"
	"iter"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/internal/reach"
)

// EstimateExpiry counts the files (and their bytes) that expiring
// expireIDs frees: files reachable now and not after the plan's commits.
// "After" is every snapshot that is kept, plus the live data and delete
// files of the current snapshot that the plan's compaction does not rewrite
// (compactInputs reports the inputs by path; nil means none), which the
// compaction commit carries into its new snapshot. It fills
// diff.ExpireAction.FilesToDelete/BytesToDelete.
//
// What it does not see: manifests and manifest lists that the plan's own
// commits will write and then drop, and manifests that rewrite_manifests
// replaces (kept reachable here), so it can only under-count.
func (s *Session) EstimateExpiry(ctx context.Context, address string, expireIDs []int64, compactInputs func(path string) bool) (files, bytes int64, err error) {
	tbl, err := s.LoadTable(ctx, address)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	files, bytes, err = estimateFreed(ctx, fsys, tbl.Metadata(), expireIDs, compactInputs)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	return files, bytes, nil
}

func estimateFreed(ctx context.Context, fsys iceio.IO, md table.Metadata, expireIDs []int64, compactInputs func(path string) bool) (files, bytes int64, err error) {
	expire := map[int64]bool{}
	for _, id := range expireIDs {
		expire[id] = true
	}
	var kept []int64
	for _, id := range allSnapshotIDs(md) {
		if !expire[id] {
			kept = append(kept, id)
		}
	}
	norm := func(p string) string { return diff.NormalizePath(p, nil, nil) }

	// Both sides go through external sorters so that a table with millions
	// of files is compared in bounded memory, by a sorted merge.
	before, after := reach.NewSorter(defaultSpillLimit), reach.NewSorter(defaultSpillLimit)
	defer before.Close()
	defer after.Close()
	err = walkReachable(ctx, fsys, md, expireIDs, false, func(p string, size int64, _ string) error {
		return before.Add(reach.Rec{Key: norm(p), N1: size})
	})
	if err != nil {
		return 0, 0, err
	}
	err = walkReachable(ctx, fsys, md, kept, false, func(p string, _ int64, _ string) error {
		return after.Add(reach.Rec{Key: norm(p)})
	})
	if err != nil {
		return 0, 0, err
	}
	if cur := md.CurrentSnapshot(); cur != nil && expire[cur.SnapshotID] {
		err = walkReachable(ctx, fsys, md, []int64{cur.SnapshotID}, false, func(p string, _ int64, cat string) error {
			if (cat == CategoryData || cat == CategoryDelete) && (compactInputs == nil || !compactInputs(p)) {
				return after.Add(reach.Rec{Key: norm(p)})
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	// Only files reachable from an expired snapshot can be freed, so the
	// before side is walked from those alone.
	next, stop := iter.Pull2(after.Sorted())
	defer stop()
	aft, aerr, ok := next()
	last, first := "", true
	for f, err := range before.Sorted() {
		if err != nil {
			return 0, 0, err
		}
		if !first && f.Key == last {
			continue
		}
		last, first = f.Key, false
		for ok && aerr == nil && aft.Key < f.Key {
			aft, aerr, ok = next()
		}
		if aerr != nil {
			return 0, 0, aerr
		}
		if ok && aft.Key == f.Key {
			continue
		}
		files++
		bytes += max(f.N1, 0)
	}
	return files, bytes, nil
}
