package testkit

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
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

// LiveDeleteFiles is every live delete entry of tbl's current snapshot (a
// DV by its Puffin file and data file), whether or not a live data file
// still matches it.
func LiveDeleteFiles(t testing.TB, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	fsys, mans := CurrentManifests(t, tbl)
	var out []iceberg.DataFile
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.DataFile())
		}
	}
	return out
}

// RequireManifestsAgree fails for each live entry of tbl's current
// snapshot that is not in a manifest of its own spec and content (a data
// manifest holds data files, a delete manifest delete files), as Zamboni's
// spec-agreement check requires of a rewritten table.
func RequireManifestsAgree(t testing.TB, tbl *table.Table) {
	t.Helper()
	fsys, mans := CurrentManifests(t, tbl)
	for _, m := range mans {
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			data := df.ContentType() == iceberg.EntryContentData
			if df.SpecID() != m.PartitionSpecID() || data != (m.ManifestContent() == iceberg.ManifestContentData) {
				t.Errorf("%s: manifest %s (spec %d, content %v) holds %s (spec %d, content %v)", tbl.Identifier(),
					m.FilePath(), m.PartitionSpecID(), m.ManifestContent(), df.FilePath(), df.SpecID(), df.ContentType())
			}
		}
	}
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
