package diff

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// TestPlanDangling: remove_dangling_deletes is planned only with a
// dangling_deletes block and something dangling, carries the observed
// figures and says why; dangling files of a spec whose manifests cannot be
// written make it a refusal instead.
func TestPlanDangling(t *testing.T) {
	pol := &config.Effective{}
	d := &DanglingDeletes{DeleteFiles: 3, DeleteBytes: 300, PositionDeletes: 2, EqualityDeletes: 1, ManifestsDropped: 1, ManifestsRewritten: 1, SpecIDs: []int{0, 1}}
	st := &TableState{DanglingDeletes: d}
	if _, _, ok := planDangling(pol, st); ok {
		t.Fatal("planned without a dangling_deletes block")
	}
	pol.DanglingDeletes = config.DanglingDeletesPolicy{Declared: true, DeclRange: hcl.Range{Filename: "x/main.icewright.hcl", Start: hcl.Pos{Line: 7}}}
	if _, _, ok := planDangling(pol, &TableState{DanglingDeletes: &DanglingDeletes{}}); ok {
		t.Fatal("planned with nothing dangling")
	}
	a, refusals, ok := planDangling(pol, st)
	if !ok || len(refusals) > 0 || a.DanglingDeletes == nil || a.DanglingDeletes.DeleteFiles != 3 || a.Validate() != nil {
		t.Fatalf("planned %v %+v %v", ok, a, refusals)
	}
	if want := "dangling_deletes (main.icewright.hcl:7): 2 position delete files, 1 equality delete file apply to no live data file"; a.Reason != want {
		t.Errorf("reason %q, want %q", a.Reason, want)
	}
	st.UnwritableSpecs = map[int]string{1: "partition spec 1 has 2 decimal fields"}
	if _, refusals, ok := planDangling(pol, st); ok || len(refusals) != 1 || !strings.Contains(refusals[0].Reason, "3 dangling delete files are not removed: some are of spec 1, partition spec 1 has 2 decimal fields") {
		t.Errorf("unwritable spec: planned %v, refusals %+v", ok, refusals)
	}
}
