package providers

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Reference categories, as counted in diff.OrphanScan.Categories.
const (
	CategoryManifestList        = "manifest_list"
	CategoryManifest            = "manifest"
	CategoryData                = "data"
	CategoryDelete              = "delete" // position, equality deletes and deletion vectors
	CategoryStatistics          = "statistics"
	CategoryPartitionStatistics = "partition_statistics"
	CategoryMetadata            = "metadata"
	CategoryVersionHint         = "version_hint"
)

// ReachableFiles calls visit for every file that the given snapshots reach:
// their manifest lists, manifests, data files, delete files (position,
// equality, deletion vectors) and the statistics and partition-statistics
// files recorded for them. It does not visit metadata.json files (they
// belong to the table, not to a snapshot).
//
// Manifests shared by several snapshots are read once (a set of manifest
// paths is kept; there are far fewer manifests than files). Only live
// entries (ADDED, EXISTING) are visited: a snapshot cannot read a file its
// manifest marks DELETED, so for expiry such a file is garbage once no kept
// snapshot has it live. (The orphan scan also counts DELETED entries, to err
// toward keeping files.) A data
// file may be visited more than once when several manifests name it;
// callers de-duplicate. Sizes come from the metadata (manifest lengths,
// file_size_in_bytes); a manifest list's size is read from storage when the
// IO can stat, else 0.
func ReachableFiles(ctx context.Context, tbl *table.Table, snapshotIDs []int64, visit func(path string, size int64, category string) error) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("reachable files: open storage: %w", err)
	}
	return walkReachable(ctx, fsys, tbl.Metadata(), snapshotIDs, false, visit)
}

func walkReachable(ctx context.Context, fsys iceio.IO, md table.Metadata, snapshotIDs []int64, withDeleted bool, visit func(path string, size int64, category string) error) error {
	return walkReachableEntries(ctx, fsys, md, snapshotIDs, withDeleted, func(path string, size int64, category string, _ bool) error {
		return visit(path, size, category)
	})
}

// walkReachableEntries is walkReachable whose visitor also learns whether a
// data or delete file was named only by a DELETED manifest entry (false for
// manifest lists, manifests and statistics), so one walk can tell files that
// must still exist from files that may already be gone.
func walkReachableEntries(ctx context.Context, fsys iceio.IO, md table.Metadata, snapshotIDs []int64, withDeleted bool, visit func(path string, size int64, category string, deleted bool) error) error {
	want := make(map[int64]bool, len(snapshotIDs))
	seenManifest := map[string]bool{}
	stat, _ := fsys.(iceio.StatIO)
	for _, id := range snapshotIDs {
		snap := md.SnapshotByID(id)
		if snap == nil {
			return fmt.Errorf("snapshot %d is not in the table metadata", id)
		}
		want[id] = true
		if snap.ManifestList != "" {
			var size int64
			if stat != nil {
				if fi, err := stat.Stat(snap.ManifestList); err == nil {
					size = fi.Size()
				}
			}
			if err := visit(snap.ManifestList, size, CategoryManifestList, false); err != nil {
				return err
			}
		}
		manifests, err := snap.Manifests(fsys)
		if err != nil {
			return fmt.Errorf("read manifest list of snapshot %d: %w", id, err)
		}
		for _, m := range manifests {
			if seenManifest[m.FilePath()] {
				continue
			}
			seenManifest[m.FilePath()] = true
			if err := visit(m.FilePath(), m.Length(), CategoryManifest, false); err != nil {
				return err
			}
			cat := CategoryData
			if m.ManifestContent() == iceberg.ManifestContentDeletes {
				cat = CategoryDelete
			}
			proj := iceberg.ManifestEntryProjection{}
			for entry, err := range iceberg.EntriesWithProjection(fsys, m, !withDeleted, proj) {
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				df := entry.DataFile()
				c := cat
				if df.ContentType() != iceberg.EntryContentData {
					c = CategoryDelete
				}
				if err := visit(df.FilePath(), df.FileSizeBytes(), c, entry.Status() == iceberg.EntryStatusDELETED); err != nil {
					return err
				}
			}
		}
	}
	for sf := range md.Statistics() {
		if want[sf.SnapshotID] {
			if err := visit(sf.StatisticsPath, sf.FileSizeInBytes, CategoryStatistics, false); err != nil {
				return err
			}
		}
	}
	for sf := range md.PartitionStatistics() {
		if want[sf.SnapshotID] {
			if err := visit(sf.StatisticsPath, sf.FileSizeInBytes, CategoryPartitionStatistics, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// allSnapshotIDs lists every snapshot in the metadata. Every ref points at a
// snapshot in the metadata and ancestry is only followed through it, so this
// is the set "any snapshot of any ref can reach" and more.
func allSnapshotIDs(md table.Metadata) []int64 {
	snaps := md.Snapshots()
	ids := make([]int64, 0, len(snaps))
	for _, s := range snaps {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}
