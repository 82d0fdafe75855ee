package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/icewright/icewright/providers/testkit"
)

// TestMetadataNamesIceberggoCommits pins committableMetadataName to what
// iceberg-go's sql catalog really does: a table registered at a metadata
// file of each name gets one commit, which succeeds exactly when the name
// is one icewright calls committable.
func TestMetadataNamesIceberggoCommits(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	src := l.CreateTable(t, "ns.src", testkit.TableOptions{})
	src = testkit.Append(t, src, 1, 10, 1)
	raw, err := os.ReadFile(strings.TrimPrefix(src.MetadataLocation(), "file://"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(strings.TrimPrefix(src.MetadataLocation(), "file://"))
	for i, name := range []string{
		"v2.metadata.json",
		"00007-" + uuid.NewString() + ".metadata.json",
		"vfinal.metadata.json",
		"00004-v3-upgraded.metadata.json",
		"v2-final.metadata.json",
		"metadata.json",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		tbl := l.RegisterSQL(t, "ns.t"+string(rune('a'+i)), p)
		txn := tbl.NewTransaction()
		if err := txn.SetProperties(iceberg.Properties{"k": "v"}); err != nil {
			t.Fatal(err)
		}
		_, err := txn.Commit(ctx)
		if want := committableMetadataName(p); (err == nil) != want {
			t.Errorf("%s: committable %v, but iceberg-go's commit says %v", name, want, err)
		}
		if got := commitProblem("sql", p); (got == "") != committableMetadataName(p) {
			t.Errorf("%s: commitProblem %q", name, got)
		}
	}
	if commitProblem("rest", filepath.Join(dir, "vfinal.metadata.json")) != "" {
		t.Error("a REST catalog names its files itself; nothing to refuse")
	}
}
