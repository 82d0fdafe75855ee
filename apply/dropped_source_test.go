package apply

import (
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// TestDroppedPartitionSourceRefusedInPlan: a table whose partition field
// was removed and its source column then dropped keeps its files in the
// old spec. A rewrite of them failed the commit check at apply on every
// run (iceberg-go writes their partition tuples empty); the plan now
// refuses their compaction with the reason, and apply never tries it
// (issue 41 item 5).
func TestDroppedPartitionSourceRefusedInPlan(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	spec := tbl.Spec()
	field := spec.Field(0).Name
	testkit.DropPartitionSource(t, tbl, field, "event_ts")
	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if a := actionOf(tp, diff.Compact); a != nil {
		t.Errorf("the plan compacts files of a spec whose source column was dropped: %+v", a)
	}
	var why string
	for _, r := range tp.Refusals {
		if r.Action == string(diff.Compact) {
			why = r.Reason
		}
	}
	if !strings.Contains(why, "dropped from the schema") || !strings.Contains(why, field) {
		t.Fatalf("no compaction refusal naming the dropped source column: %+v", tp.Refusals)
	}
	res := e.apply(p, false)
	if strings.Contains(describe(res), "commit check") {
		t.Fatalf("apply still tried the rewrite:\n%s", describe(res))
	}
}
