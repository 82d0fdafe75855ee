package orphans

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iceops/iceops/providers/testkit"
)

// Apply's re-check (Remove) keeps a planned orphan that the table has come
// to reference, since the plan, by a file: URI whose literal name it is
// (as Java writes a file under an escaped partition directory): the
// reference's decoded name is another file, so only the literal name
// (orphanLiteral) says the planned path is live.
func TestRemoveKeepsLiteralNameOfEscapedReference(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("setup: %d tasks, %v", len(tasks), err)
	}
	src := tasks[0].File
	raw, err := os.ReadFile(testkit.LocalPath(t, src.FilePath()))
	if err != nil {
		t.Fatal(err)
	}
	// The plan saw this file unreferenced and old.
	lit := filepath.Join(testkit.LocalPath(t, tbl.Location()), "data", "ts=2023-08-22T09%3A15%3A20", "00000-0-java.parquet")
	if err := os.MkdirAll(filepath.Dir(lit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lit, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(lit, old, old); err != nil {
		t.Fatal(err)
	}
	// Since the plan, a writer added it by its escaped file:// URI.
	testkit.CommitDataFileAt(t, tbl, src, "file://"+lit, nil)
	res, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{lit}, OlderThan: 72 * time.Hour, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lit); err != nil {
		t.Fatalf("the file the table references by its literal name was deleted (%+v): %v", res, err)
	}
	if res.FilesDeleted != 0 || !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, "referenced by the table now") }) {
		t.Errorf("result %+v", res)
	}
}
