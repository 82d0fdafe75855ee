package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
)

// TestSavedPlanSortColumnRenamedMeanwhile: between plan and apply another
// engine renames the column the approved sort order names. The fresh plan
// refuses replace_sort_order (its column is no longer in the schema), so
// apply never attempts it: the executor is not asked to install an order
// the rewrite could not sort by. The table's other actions, properties
// included (they share the sort order's commit), still run, and the table
// is a failure for the refusal.
func TestSavedPlanSortColumnRenamedMeanwhile(t *testing.T) {
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + sortedPolicyHCL(`["kind"]`))
	e.debtTable(orders, nil)
	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if actionOf(tp, diff.ReplaceSortOrder) == nil || actionOf(tp, diff.UpdateProperties) == nil || len(tp.Refusals) > 0 {
		t.Fatalf("the case is not set up: actions %v refusals %v", tp.Actions, tp.Refusals)
	}

	tbl := e.lake.Reload(t, orders)
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).RenameColumn([]string{"kind"}, "event_kind").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}

	res := e.apply(p, true)
	tr := tableResult(t, res, "lake."+orders)
	if !tr.Replanned || tr.Status != StatusFailed {
		t.Fatalf("want a re-planned, failed table:\n%s", describe(res))
	}
	byType := map[diff.ActionType]ActionResult{}
	for _, a := range tr.Actions {
		byType[a.Type] = a
	}
	so := byType[diff.ReplaceSortOrder]
	if so.Status != StatusFailed || so.Committed || !strings.HasPrefix(so.Error, "refused at apply time: ") ||
		!strings.Contains(so.Error, `column "kind" is not in the table's schema (its columns: "event_id", "user_id", "event_ts", "event_kind", "payload")`) {
		t.Fatalf("replace_sort_order: %+v", so)
	}
	for _, typ := range []diff.ActionType{diff.UpdateProperties, diff.Compact, diff.ExpireSnapshots} {
		if a := byType[typ]; a.Status != StatusDone {
			t.Errorf("%s %s (%s): the table's other actions must run\n%s", typ, a.Status, a.Error, describe(res))
		}
	}
	if got := e.lake.Reload(t, orders); !got.SortOrder().IsUnsorted() {
		t.Errorf("a sort order was installed: %s", got.SortOrder())
	}
}
