package compaction

import (
	"context"
	"strconv"
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
	l, tbl := corpusTable(t, "iceberg-cxx-trino-v3-deletion-vectors",
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
	next := rewriteAllDropsDeletes(t, l.Catalog, tbl, 8)
	requireSummarySizeAsIceberg(t, next)
}

// Trino's optimize rewrote the data files two position delete files named
// and left the deletes in the table, matching no live file. Read apart
// from everything, they changed no row; kept, the plan saw a file with
// deletes and compacted it again on every run. The rewrite drops them.
func TestDanglingPositionDeletesRemoved(t *testing.T) {
	_, tbl := corpusTable(t, "iceberg-cxx-trino-dangling-deletes",
		"metadata/00011-31179cfb-920d-47df-af37-7362d4028557.metadata.json", nil)
	if n := len(liveDeleteEntries(t, tbl)); n != 2 {
		t.Fatalf("setup: %d delete entries, want 2", n)
	}
	if pos, eq, dv := countDeletes(liveTasks(t, tbl)); pos+eq+dv != 0 {
		t.Fatalf("setup: the deletes apply to a live file (%d position, %d equality, %d DVs)", pos, eq, dv)
	}
	rewriteAllDropsDeletes(t, nil, tbl, 10)
}

// rewriteAllDropsDeletes rewrites every live file of tbl (rows live rows)
// and requires the same rows after it and no delete file entry left.
func rewriteAllDropsDeletes(t *testing.T, cat table.CatalogIO, tbl *table.Table, rows int) *table.Table {
	t.Helper()
	before := scanStrings(t, tbl)
	if len(before) != rows {
		t.Fatalf("setup: %d live rows, want %d", len(before), rows)
	}
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Binpack, TargetFileSize: 1 << 20, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed() == 0 {
		t.Fatal("nothing rewritten")
	}
	requireSameRows(t, before, scanStrings(t, res.Table))
	for _, e := range liveDeleteEntries(t, res.Table) {
		ref := ""
		if r := e.ReferencedDataFile(); r != nil {
			ref = *r
		}
		t.Errorf("delete entry kept after the rewrite: %s (names %s)", e.FilePath(), ref)
	}
	return res.Table
}

// requireSummarySizeAsIceberg fails t unless the current snapshot's
// total-files-size is the size of its live files as Java Iceberg counts
// it: a deletion vector at its content_size_in_bytes, not its Puffin
// file's size (issue 41: Spark's commits are counted so, and the local
// path must agree).
func requireSummarySizeAsIceberg(t *testing.T, tbl *table.Table) {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap := tbl.CurrentSnapshot()
	mans, err := snap.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			size := df.FileSizeBytes()
			if table.IsDeletionVector(df) && df.ContentSizeInBytes() != nil {
				size = *df.ContentSizeInBytes()
			}
			want += size
		}
	}
	if got := snap.Summary.Properties["total-files-size"]; got != strconv.FormatInt(want, 10) {
		t.Fatalf("summary total-files-size is %s; the live files, deletion vectors at their content size, make %d", got, want)
	}
}

// Deletes that name live files are never dangling: Trino's file-scoped
// position deletes, and Java's position and equality deletes across
// partitions.
func TestDanglingDeletesKeepLiveOnes(t *testing.T) {
	for _, c := range []struct{ dir, meta string }{
		{"iceberg-cxx-trino-position-deletes", "metadata/00005-0275caad-4030-4bd9-938e-16cf762abcfb.metadata.json"},
		{"dremio-java-equality-deletes", "metadata/v8.metadata.json"},
		{"dremio-java-position-deletes", "metadata/v3.metadata.json"},
		{"iceberg-cxx-trino-v3-deletion-vectors", "metadata/00004-ae0294d0-1de5-4fab-97f1-cd80e0078fa4.metadata.json"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			_, tbl := corpusTable(t, c.dir, c.meta, nil)
			fs, err := tbl.FS(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(liveDeleteEntries(t, tbl)) == 0 {
				t.Fatal("setup: no delete files")
			}
			got, err := danglingDeletes(context.Background(), fs, tbl.Metadata(), tbl.CurrentSnapshot(), tbl.CurrentSnapshot())
			if err != nil {
				t.Fatal(err)
			}
			for _, df := range got.Files {
				t.Errorf("a delete file naming live files is called dangling: %s", df.FilePath())
			}
		})
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
