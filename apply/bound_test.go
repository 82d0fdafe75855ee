package apply

import (
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
)

func TestBoundIntersectsDestructiveActions(t *testing.T) {
	approved := []diff.Action{
		{Type: diff.UpdateProperties, Properties: &diff.PropertiesChange{Set: map[string]string{"a": "1"}}},
		{Type: diff.ExpireSnapshots, Destructive: true, Expire: &diff.ExpireAction{SnapshotIDs: []int64{1, 2, 3}, RefsToRemove: []string{"old"}}},
		{Type: diff.RemoveOrphanFiles, Destructive: true, Orphans: &diff.OrphansAction{Count: 2, Paths: []string{"/t/data/a", "/t/data/b"}}},
	}
	fresh := diff.TablePlan{Actions: []diff.Action{
		{Type: diff.Compact, Compact: &diff.CompactAction{InputFiles: 3}},
		{Type: diff.ExpireSnapshots, Destructive: true, Expire: &diff.ExpireAction{SnapshotIDs: []int64{2, 3, 4, 5}}},
		{Type: diff.RemoveOrphanFiles, Destructive: true, Orphans: &diff.OrphansAction{Count: 2, Paths: []string{"/t/data/b", "/t/data/c"}}},
	}}
	steps := bound(approved, fresh, map[diff.ActionType]bool{})
	by := map[diff.ActionType]step{}
	for _, s := range steps {
		by[s.action.Type] = s
	}
	if s := by[diff.UpdateProperties]; s.skip == "" {
		t.Fatal("properties no longer needed but not skipped")
	}
	if s := by[diff.Compact]; s.skip == "" || !strings.Contains(s.skip, "not in the approved plan") {
		t.Fatalf("compact absent from the approved plan ran: %+v", s)
	}
	e := by[diff.ExpireSnapshots]
	if e.skip != "" || len(e.action.Expire.SnapshotIDs) != 2 || e.action.Expire.SnapshotIDs[0] != 2 || e.action.Expire.SnapshotIDs[1] != 3 {
		t.Fatalf("expire bound wrong: %+v", e.action.Expire)
	}
	if len(e.action.Expire.RefsToRemove) != 0 {
		t.Fatal("a ref that no longer qualifies is removed")
	}
	if approved[1].Expire.SnapshotIDs[0] != 1 {
		t.Fatal("bound mutated the approved plan")
	}
	o := by[diff.RemoveOrphanFiles]
	if o.skip != "" || len(o.action.Orphans.Paths) != 1 || o.action.Orphans.Paths[0] != "/t/data/b" || o.action.Orphans.Count != 1 {
		t.Fatalf("orphans bound wrong: %+v", o.action.Orphans)
	}
	// Order is docs/design.md §5.1.
	for i := 1; i < len(steps); i++ {
		if steps[i-1].action.Type.Order() > steps[i].action.Type.Order() {
			t.Fatal("steps out of order")
		}
	}
	// A refusal in the fresh plan turns into a failed step, not a silent skip.
	steps = bound(approved[1:2], diff.TablePlan{Refusals: []diff.Refusal{{Action: "expire_snapshots", Reason: "gc.enabled is \"false\""}}}, map[diff.ActionType]bool{})
	if len(steps) != 1 || !steps[0].refused {
		t.Fatalf("refusal not reported: %+v", steps)
	}
}
