package providers

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
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

	type sized struct {
		key  string
		size int64
	}
	var before []sized
	err = walkReachable(ctx, fsys, md, expireIDs, false, func(p string, size int64, _ string) error {
		before = append(before, sized{norm(p), size})
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var after []string
	err = walkReachable(ctx, fsys, md, kept, false, func(p string, _ int64, _ string) error {
		after = append(after, norm(p))
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if cur := md.CurrentSnapshot(); cur != nil && expire[cur.SnapshotID] {
		err = walkReachable(ctx, fsys, md, []int64{cur.SnapshotID}, false, func(p string, _ int64, cat string) error {
			if (cat == CategoryData || cat == CategoryDelete) && (compactInputs == nil || !compactInputs(p)) {
				after = append(after, norm(p))
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	// Only files reachable from an expired snapshot can be freed, so the
	// before set is walked from those alone; sorted merge against after.
	slices.SortFunc(before, func(a, b sized) int { return cmp.Compare(a.key, b.key) })
	before = slices.CompactFunc(before, func(a, b sized) bool { return a.key == b.key })
	slices.Sort(after)
	after = slices.Compact(after)
	j := 0
	for _, f := range before {
		for j < len(after) && after[j] < f.key {
			j++
		}
		if j < len(after) && after[j] == f.key {
			continue
		}
		files++
		bytes += max(f.size, 0)
	}
	return files, bytes, nil
}
