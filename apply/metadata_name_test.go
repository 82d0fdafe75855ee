package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// TestUnnamedMetadataRefusedInPlan: a Spark-written table whose current
// metadata file has a name iceberg-go's sql catalog cannot continue
// (vfinal.metadata.json) gets every committing action refused in the plan,
// with the reason, instead of an apply that writes files and then fails
// "commit outcome unknown"; the orphan sweep, which commits nothing, runs.
func TestUnnamedMetadataRefusedInPlan(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "")
	name := "sales.spark"
	tbl := e.lake.AddFixture(t, testkit.Fixtures[2], name)
	tbl = e.lake.Backdate(t, tbl, 30*24*time.Hour)
	cur := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	raw, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(filepath.Dir(cur), "vfinal.metadata.json")
	if err := os.WriteFile(final, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.lake.DB.ExecContext(ctx, `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE table_name = 'spark'`,
		final, tbl.MetadataLocation()); err != nil {
		t.Fatal(err)
	}
	tbl = e.lake.Reload(t, name)
	if !strings.HasSuffix(tbl.MetadataLocation(), "vfinal.metadata.json") {
		t.Fatalf("setup: table at %s", tbl.MetadataLocation())
	}
	stray := strayFile(t, tbl, "stray.parquet", 5*24*time.Hour)
	rows := testkit.ScanRows(t, tbl)

	p := e.plan()
	tp := tablePlan(t, p, "lake."+name)
	for _, a := range tp.Actions {
		if a.Type != diff.RemoveOrphanFiles {
			t.Fatalf("plan has %s, which cannot commit on this table", a.Type)
		}
	}
	if actionOf(tp, diff.RemoveOrphanFiles) == nil {
		t.Fatalf("the orphan sweep (no commit) was dropped too: %+v %+v", tp.Actions, tp.Refusals)
	}
	refused := map[string]bool{}
	for _, r := range tp.Refusals {
		if !strings.Contains(r.Reason, "vfinal.metadata.json") || !strings.Contains(r.Reason, "NNNNN-<uuid>.metadata.json") {
			t.Fatalf("refusal without the reason: %+v", r)
		}
		refused[r.Action] = true
	}
	if !refused[string(diff.Compact)] || !refused[string(diff.ExpireSnapshots)] {
		t.Fatalf("compaction and expiry must be refused in the plan: %+v", tp.Refusals)
	}

	res := e.apply(p, false)
	tr := tableResult(t, res, "lake."+name)
	if tr.Status != StatusDone || tr.Refused() == "" || !res.Failed() {
		t.Fatalf("refusals are said and exit 1, and the sweep that ran makes the table done:\n%s", describe(res))
	}
	for _, a := range tr.Actions {
		if a.Type == diff.RemoveOrphanFiles && a.Status != StatusDone {
			t.Fatalf("orphan sweep did not run:\n%s", describe(res))
		}
	}
	after := e.lake.Reload(t, name)
	if after.MetadataLocation() != tbl.MetadataLocation() {
		t.Fatalf("a commit happened: %s -> %s", tbl.MetadataLocation(), after.MetadataLocation())
	}
	if testkit.FilesUnder(t, after)[stray] {
		t.Fatal("orphan not removed")
	}
	if _, err := os.Stat(final); err != nil {
		t.Fatalf("current metadata file: %v", err)
	}
	if got := testkit.ScanRows(t, after); got != rows {
		t.Fatalf("rows changed: %d -> %d", rows, got)
	}
	checkReferencedExist(t, after)
}
