package testkit

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/providers/internal/reach"
)

// CurrentManifests opens tbl's IO and lists its current snapshot's
// manifests.
func CurrentManifests(t testing.TB, tbl *table.Table) (iceio.IO, []iceberg.ManifestFile) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return fsys, ms
}

// Reachable lists the files the snapshots ids of tbl reach through their
// live entries (reach.Walk), by category, each sorted and without
// repeats.
func Reachable(t testing.TB, tbl *table.Table, ids ...int64) map[string][]string {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = reach.Walk(context.Background(), reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: ids, Consumers: []reach.Consumer{{File: func(f reach.File) error {
		out[f.Category] = append(out[f.Category], f.Path)
		return nil
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	for c, ps := range out {
		slices.Sort(ps)
		out[c] = slices.Compact(ps)
	}
	return out
}

// DataFiles lists the table's current data file paths, sorted.
func DataFiles(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	return Reachable(t, tbl, tbl.CurrentSnapshot().SnapshotID)[reach.CategoryData]
}
