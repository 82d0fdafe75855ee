package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportForeignWriters: tables Spark SQL (sorted with WRITE ORDERED BY,
// with properties) and PyIceberg wrote are imported, and the next plan, run
// by the CLI on the generated file beside the catalog block, is empty.
func TestImportForeignWriters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l := newForeignLake(ctx, t)
	sorted := l.name("sorted")
	plain := l.name("plain")
	l.sql(ctx, t,
		"CREATE TABLE "+sorted+" "+sparkColumns+" USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2', 'write.target-file-size-bytes'='134217728', 'history.expire.min-snapshots-to-keep'='5', 'comment.owner'='ana')",
		"ALTER TABLE "+sorted+" WRITE ORDERED BY bucket(8, id) DESC NULLS FIRST, truncate(3, s), ts",
		"INSERT INTO "+sorted+" "+sparkRows(0, 100),
		"CREATE TABLE "+plain+" "+sparkColumns+" USING iceberg TBLPROPERTIES ('format-version'='2')",
		"INSERT INTO "+plain+" "+sparkRows(0, 50),
	)
	l.pyiceberg(ctx, t)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(fmt.Sprintf("catalog %q {\n  %s}\n", l.label, l.hcl)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := icewright(ctx, t, dir, "import", "-target="+l.label+"."+l.ns+".*", "-out=imported.icewright.hcl")
	if res.code != 0 {
		t.Fatalf("import: exit %d", res.code)
	}
	src, err := os.ReadFile(filepath.Join(dir, "imported.icewright.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`sort_order       = ["bucket(8, id) DESC NULLS FIRST", "truncate(3, s) ASC NULLS FIRST", "ts ASC NULLS FIRST"]`,
		`target_file_size = "128MiB"`,
		`"comment.owner"`,
		`#   min_snapshots = 5`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("missing %s in:\n%s", want, src)
		}
	}
	t.Logf("imported.icewright.hcl:\n%s", src)
	if res := icewright(ctx, t, dir, "fmt", "-check", "imported.icewright.hcl"); res.code != 0 {
		t.Errorf("fmt -check: exit %d", res.code)
	}
	res = icewright(ctx, t, dir, "plan", "-detailed-exitcode")
	if res.code != 0 || !strings.Contains(res.stdout, "No changes.") {
		t.Fatalf("plan after import: exit %d\n%s\n%s", res.code, res.stdout, src)
	}
}
