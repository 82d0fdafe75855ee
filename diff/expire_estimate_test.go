package diff

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// EstimateExpiry fills the expiry's figures, hands the estimate the
// compaction groups planned before it, and refuses (and drops) an expiry
// that would release files on another storage; an estimate's error fails
// the plan.
func TestEstimateExpiryFillsAndRefuses(t *testing.T) {
	groups := []CompactGroup{{SpecID: 0, Partition: "p=1"}}
	plan := func() TablePlan {
		return TablePlan{Actions: []Action{
			{Type: Compact, Compact: &CompactAction{Groups: groups}},
			{Type: ExpireSnapshots, Expire: &ExpireAction{SnapshotIDs: []int64{1, 2}}},
		}}
	}
	tp := plan()
	err := tp.EstimateExpiry(&TableState{Location: "file:///w/t"}, func(ids []int64, gs []CompactGroup) (ExpiryFreed, error) {
		if !slices.Equal(ids, []int64{1, 2}) || len(gs) != 1 {
			t.Errorf("estimate asked for %v with groups %v", ids, gs)
		}
		return ExpiryFreed{Files: 3, Bytes: 30, EscapedFileURIs: 1}, nil
	})
	if err != nil || len(tp.Actions) != 2 || len(tp.Refusals) != 0 {
		t.Fatalf("err %v, plan %+v", err, tp)
	}
	if e := tp.Actions[1].Expire; e.FilesToDelete != 3 || e.BytesToDelete != 30 || e.EscapedFileURIs != 1 {
		t.Fatalf("figures %+v", e)
	}

	tp = plan()
	err = tp.EstimateExpiry(&TableState{Location: "file:///w/t"}, func([]int64, []CompactGroup) (ExpiryFreed, error) {
		return ExpiryFreed{Files: 3, ForeignFiles: 2, ForeignExample: "s3://b/f.parquet"}, nil
	})
	if err != nil || len(tp.Actions) != 1 || tp.Actions[0].Type != Compact {
		t.Fatalf("err %v, actions %+v", err, tp.Actions)
	}
	if len(tp.Refusals) != 1 || tp.Refusals[0].Action != string(ExpireSnapshots) ||
		!strings.Contains(tp.Refusals[0].Reason, "release 2 files on another storage than the table location file:///w/t (first: s3://b/f.parquet)") {
		t.Fatalf("refusals %+v", tp.Refusals)
	}

	tp = plan()
	boom := errors.New("boom")
	if err := tp.EstimateExpiry(&TableState{}, func([]int64, []CompactGroup) (ExpiryFreed, error) { return ExpiryFreed{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}
