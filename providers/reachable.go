package providers

import (
	"context"
	"fmt"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/providers/internal/reach"
)

// ReachableFiles calls visit for every file that the given snapshots reach
// (reach.Walk): their manifest lists, manifests, data and delete files and
// the statistics files recorded for them, each live entry's file, with its
// size from the metadata (a manifest list's from storage).
func ReachableFiles(ctx context.Context, tbl *table.Table, snapshotIDs []int64, visit func(path string, size int64, category string) error) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("reachable files: open storage: %w", err)
	}
	return walkReachable(ctx, fsys, tbl.Metadata(), snapshotIDs, false, visit)
}

func walkReachable(ctx context.Context, fsys iceio.IO, md table.Metadata, snapshotIDs []int64, withDeleted bool, visit func(path string, size int64, category string) error) error {
	return reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: snapshotIDs, Consumers: []reach.Consumer{{
		WithDeleted: withDeleted, ListSizes: true,
		File: func(f reach.File) error { return visit(f.Path, f.Size, f.Category) },
	}}})
}

// Reference categories, as counted in diff.OrphanScan.Categories.
const (
	CategoryManifestList        = reach.CategoryManifestList
	CategoryManifest            = reach.CategoryManifest
	CategoryData                = reach.CategoryData
	CategoryDelete              = reach.CategoryDelete
	CategoryStatistics          = reach.CategoryStatistics
	CategoryPartitionStatistics = reach.CategoryPartitionStatistics
	CategoryMetadata            = reach.CategoryMetadata
	CategoryVersionHint         = reach.CategoryVersionHint
)

func allSnapshotIDs(md table.Metadata) []int64 { return reach.AllSnapshots(md) }
