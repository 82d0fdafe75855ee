package compaction

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers/testkit"
)

// corpusTable copies a table of internal/testdata/tables (written by
// another engine) into a fresh lakehouse and registers it as ns.<name>.
// edit, when set, rewrites the copied current metadata file's text first.
func corpusTable(t *testing.T, dir, current string, edit func(string) string) (*testkit.Lakehouse, *table.Table) {
	t.Helper()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	src := filepath.Join(testenv.RepoRoot(t), "internal", "testdata", "tables", dir)
	dst := filepath.Join(l.Warehouse, "corpus", strings.ReplaceAll(dir, "-", "_"))
	md := testkit.CopyTable(t, src, dst, current)
	if edit != nil {
		p := strings.TrimPrefix(md, "file://")
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		edited := edit(string(raw))
		if edited == string(raw) {
			t.Fatal("setup: the edit changed nothing")
		}
		if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return l, l.RegisterSQL(t, "corpus."+strings.ReplaceAll(dir, "-", "_"), md)
}

// scanStrings is every row ScanTable reads, as "col=value" cells (∅ for
// null) joined by "|", sorted.
func scanStrings(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	var out []string
	err := ScanTable(context.Background(), tbl, func(rec arrow.RecordBatch) error {
		out = append(out, batchStrings(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func batchStrings(rec arrow.RecordBatch) []string {
	var out []string
	for i := range int(rec.NumRows()) {
		var cells []string
		for c := range int(rec.NumCols()) {
			v := "∅"
			if col := rec.Column(c); !col.IsNull(i) {
				v = col.ValueStr(i)
			}
			cells = append(cells, rec.Schema().Field(c).Name+"="+v)
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

func TestExploreCorpus(t *testing.T) {
	for _, c := range [][2]string{
		{"duckdb-add-columns-with-defaults", "metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"},
		{"duckdb-add-columns-with-defaults-in-struct", "metadata/00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json"},
		{"duckdb-partition-time", "metadata/00001-44546aa6-1ee5-48c5-9e3b-bc6c0bc0a60c.metadata.json"},
		{"duckdb-partition-decimal-integer", "metadata/v2.metadata.json"},
	} {
		_, tbl := corpusTable(t, c[0], c[1], nil)
		for _, r := range scanStrings(t, tbl) {
			t.Log(r)
		}
	}
	_ = errors.New
}
