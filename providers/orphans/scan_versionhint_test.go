package orphans

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// A Spark-written Hadoop table that then got write.metadata.path: its new
// metadata goes to the custom directory, while metadata/version-hint.text
// (what Hadoop readers open) stays where Spark wrote it. The hint is the
// table's, not an orphan: planning it as one made 33% of the table look
// unreferenced, and apply skipped it, so the plan never converged (issue 14).
func TestOrphanScanVersionHintWithWriteMetadataPath(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	src := filepath.Join("..", "..", "internal", "testdata", "tables", "glaredb-spark-v1-versioned")
	dst := filepath.Join(l.Warehouse, "spark", "versioned")
	tbl := l.RegisterSQL(t, "spark.versioned", testkit.CopyTable(t, src, dst, "metadata/v2.metadata.json"))
	custom := "file://" + filepath.Join(dst, "custom_metadata")
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(map[string]string{"write.metadata.path": custom}); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tbl.MetadataLocation(), custom+"/") {
		t.Fatalf("metadata went to %s, want under %s: the test would not cover the case", tbl.MetadataLocation(), custom)
	}
	// Everything is old, so only references keep files out of the plan.
	backdateTree(t, dst, time.Now().Add(-30*24*time.Hour))
	sess := sessionFor(t, l)
	cur, err := sess.LoadTable(ctx, "lake.spark.versioned")
	if err != nil {
		t.Fatal(err)
	}
	scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.spark.versioned"), cur, orphanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range scan.Candidates {
		if path.Base(c.Path) == "version-hint.text" {
			t.Fatalf("version-hint.text is an orphan candidate: %s", c.Path)
		}
	}
	if n := scan.Categories[reach.CategoryVersionHint]; n != 1 {
		t.Fatalf("referenced version hints = %d, want 1 (categories %v)", n, scan.Categories)
	}
}

// backdateTree sets the mtime of every file under root.
func backdateTree(t *testing.T, root string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}
