package diff

import (
	"strings"
	"testing"
)

// Candidates without first_row_id (a table upgraded to v3 with no commit
// since: the duckdb-iceberg corpus table merch_v1) are compacted in the
// same apply when the compaction may first commit a manifest rewrite,
// whose v3 manifest list assigns their ids: the policy has a manifests
// block and iceberg-go's rewrite would merge something. The plan said
// "refused" and rewrote the manifests, and the next plan offered the
// compaction: two applies. Otherwise the refusal stays, saying what would
// assign the ids.
func TestRowIDsAssignedBeforeCompaction(t *testing.T) {
	state := func(manifests int) *TableState {
		st := linear(1 * day)
		st.FormatVersion = 3
		p := candidatePartition("", 10, 10)
		p.NoRowIDCandidates = 2
		st.Partitions = []PartitionStats{p}
		for range manifests {
			st.Manifests.Files = append(st.Manifests.Files, ManifestInfo{Data: true, Length: 4000})
		}
		st.Manifests.Count = manifests
		return st
	}
	tp := PlanTable(fullPolicy(), state(2), testNow)
	a := actionOf(tp, Compact)
	if a == nil || !a.Compact.AssignRowIDs || a.Compact.InputFiles != 2 || a.Compact.Commits != 2 {
		t.Fatalf("two manifests and a manifests block: want the compaction with assign_row_ids and 2 commits: %+v %+v", a, tp.Refusals)
	}
	if r := compactRefusal(tp); r != "" {
		t.Errorf("unexpected refusal: %s", r)
	}

	noManifests := fullPolicy()
	noManifests.Manifests.Declared = false
	tp = PlanTable(noManifests, state(2), testNow)
	if hasAction(tp, Compact) || !strings.Contains(compactRefusal(tp), "with a manifests block") {
		t.Errorf("no manifests block: want a refusal naming it: %v %q", tp.Actions, compactRefusal(tp))
	}

	// iceberg-go passes a lone manifest through and commits nothing: the
	// ids would not be assigned.
	tp = PlanTable(fullPolicy(), state(1), testNow)
	if hasAction(tp, Compact) || !strings.Contains(compactRefusal(tp), "assigns nothing") {
		t.Errorf("one manifest: want a refusal: %v %q", tp.Actions, compactRefusal(tp))
	}
	if hasAction(tp, RewriteManifests) {
		t.Errorf("one manifest, no compaction: a rewrite of one manifest into one is no action: %v", tp.Actions)
	}

	st := state(2)
	st.CommitProblem = "the metadata file name"
	if tp = PlanTable(fullPolicy(), st, testNow); hasAction(tp, Compact) {
		t.Errorf("a table that cannot commit: no compaction: %v", tp.Actions)
	}
	st = state(2)
	st.Partitions[0].NoRowIDCandidates = 0
	if a := actionOf(PlanTable(fullPolicy(), st, testNow), Compact); a == nil || a.Compact.AssignRowIDs || a.Compact.Commits != 1 {
		t.Errorf("every file has its id: no manifest rewrite first: %+v", a)
	}
}
