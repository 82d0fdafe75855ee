package apply

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/testkit"
)

// TestV3WithoutRowIDsRefusedInPlan: a table upgraded to format v3 with no
// commit since has data files without first_row_id. The plan refuses their
// compaction (with what to do about it) instead of apply discovering it,
// and the table's expiry and orphan sweep still run.
func TestV3WithoutRowIDsRefusedInPlan(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	txn := tbl.NewTransaction()
	if err := txn.UpgradeFormatVersion(3); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stray := strayFile(t, tbl, "stray.parquet", 5*24*time.Hour)
	rows := testkit.ScanIDs(t, tbl)

	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if actionOf(tp, diff.Compact) != nil {
		t.Fatalf("plan compacts files without first_row_id: %+v", tp.Actions)
	}
	var refusal string
	for _, r := range tp.Refusals {
		if r.Action == string(diff.Compact) {
			refusal = r.Reason
		}
	}
	if !strings.Contains(refusal, "no first_row_id") || !strings.Contains(refusal, "row lineage") {
		t.Fatalf("plan does not refuse the compaction with the reason: %+v", tp.Refusals)
	}
	if actionOf(tp, diff.ExpireSnapshots) == nil || actionOf(tp, diff.RemoveOrphanFiles) == nil {
		t.Fatalf("plan lost the other actions: %+v", tp.Actions)
	}

	res := e.apply(p, false)
	tr := tableResult(t, res, "lake."+orders)
	if tr.Status != StatusFailed || !strings.Contains(tr.Error, "no first_row_id") {
		t.Fatalf("the refusal must make the table an error:\n%s", describe(res))
	}
	for _, a := range tr.Actions {
		if (a.Type == diff.ExpireSnapshots || a.Type == diff.RemoveOrphanFiles) && a.Status != StatusDone {
			t.Fatalf("%s did not run:\n%s", a.Type, describe(res))
		}
	}
	after := e.lake.Reload(t, orders)
	got := testkit.ScanIDs(t, after)
	if len(got) != len(rows) {
		t.Fatalf("rows changed: %d ids before, %d after", len(rows), len(got))
	}
	for id, n := range rows {
		if got[id] != n {
			t.Fatalf("id %d: %d rows before, %d after", id, n, got[id])
		}
	}
	if testkit.FilesUnder(t, after)[stray] {
		t.Fatalf("orphan %s was not removed", stray)
	}
	checkReferencedExist(t, after)
}
