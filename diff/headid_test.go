package diff

import (
	"slices"
	"strings"
	"testing"
)

// iceberg-go v0.7.0 builds a snapshot on a head whose id is <= 0 as on an
// empty table (issue 32): every kind that adds a snapshot is refused in the
// plan with why and what to do, and the kinds that add none still run.
func TestNonPositiveHeadRefusesSnapshotCommits(t *testing.T) {
	state := func(head int64) *TableState {
		st := linear(5*day, 4*day, 1*day)
		st.Snapshots[2].ID = head
		st.CurrentSnapshotID = ptr(head)
		st.Refs = []Ref{branch("main", head)}
		st.Partitions = []PartitionStats{{DataFiles: 2, DataBytes: 20, CandidateSizes: []int64{10, 10}, CandidateBytes: 20}}
		files := []ManifestInfo{{Data: true, Length: 1000}, {Data: true, Length: 1000}, {Data: true, Length: 1000}, {Data: true, Length: 1000}}
		st.Manifests = ManifestStats{Count: len(files), DataCount: len(files), Files: files, Bytes: 4000}
		return st
	}
	pol := fullPolicy()
	pol.Manifests.MaxCount = set(1, 31)
	snapshotKinds := []ActionType{Compact, RewriteManifests}

	tp := PlanTable(pol, state(3), testNow)
	for _, k := range append(snapshotKinds, ExpireSnapshots) {
		if !hasAction(tp, k) {
			t.Fatalf("positive head: want %s planned: %v %+v", k, tp.Actions, tp.Refusals)
		}
	}
	for _, head := range []int64{-653171173268680982, 0} {
		tp := PlanTable(pol, state(head), testNow)
		for _, k := range snapshotKinds {
			i := slices.IndexFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(k) })
			if hasAction(tp, k) || i < 0 {
				t.Fatalf("head %d: want %s refused, not planned: %v %+v", head, k, tp.Actions, tp.Refusals)
			}
			if why := tp.Refusals[i].Reason; !strings.Contains(why, "parentSnapshot") || !strings.Contains(why, "another engine") {
				t.Fatalf("head %d: the refusal must name the defect and what to do: %q", head, why)
			}
		}
		a := actionOf(tp, ExpireSnapshots)
		if a == nil {
			t.Fatalf("head %d: expiry adds no snapshot and must still be planned: %v %+v", head, tp.Actions, tp.Refusals)
		}
		if slices.Contains(a.Expire.SnapshotIDs, head) {
			t.Fatalf("head %d expired: %v", head, a.Expire.SnapshotIDs)
		}
	}
	if HeadIDProblem(nil) != "" {
		t.Fatal("a table without a snapshot has no parent to lose")
	}
}
