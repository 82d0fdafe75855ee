package compaction

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Trino writes the deletion vectors of one delete statement into one Puffin
// file, a blob per data file. A rewrite of both data files must remove
// both DV entries: it removed the first only (entries were told apart by
// path), so the second stayed in the table referencing a file that no
// longer exists, and the next plan wanted to compact again.
func TestDeletionVectorsSharingAPuffinFileRemoved(t *testing.T) {
	_, tbl := corpusTable(t, "iceberg-cxx-trino-v3-deletion-vectors",
		"metadata/00004-ae0294d0-1de5-4fab-97f1-cd80e0078fa4.metadata.json", nil)
	puffins := map[string]int{}
	for _, e := range liveDeleteEntries(t, tbl) {
		puffins[e.FilePath()]++
	}
	shared := false
	for _, n := range puffins {
		shared = shared || n > 1
	}
	if !shared {
		t.Fatalf("setup: no Puffin file holds two DVs: %v", puffins)
	}
	before := scanStrings(t, tbl)
	if len(before) != 8 {
		t.Fatalf("setup: %d live rows, want 8", len(before))
	}
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Binpack, TargetFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, scanStrings(t, res.Table))
	if left := liveDeleteEntries(t, res.Table); len(left) != 0 {
		for _, e := range left {
			ref := ""
			if r := e.ReferencedDataFile(); r != nil {
				ref = *r
			}
			t.Errorf("delete entry kept after its data files were rewritten: %s (references %s)", e.FilePath(), ref)
		}
	}
}

// liveDeleteEntries is every delete file entry of the current snapshot's
// manifests, whether or not a live data file still matches it (scan
// planning would not show a dangling one).
func liveDeleteEntries(t *testing.T, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out = append(out, e.DataFile())
		}
	}
	return out
}
