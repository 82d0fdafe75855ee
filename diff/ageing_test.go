package diff

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// TestPlanAgeing: age_partitions is planned only with a partition_ageing
// block and something aged, carries the observed groups and says why; an
// ambiguous spec is a refusal in the plan, as is an unwritable source spec.
func TestPlanAgeing(t *testing.T) {
	pol := &config.Effective{}
	ag := &PartitionAgeing{After: "90d", AfterMs: 90 * 86400000, From: "day", To: "month", Column: "ts", Field: "ts_day", TargetSpecID: 1, AddsSpec: true,
		InputFiles: 3, InputBytes: 300, Records: 30,
		Groups: []AgeingGroup{{Partition: "ts_month=2024-01", Sources: []string{"ts_day=2024-01-01", "ts_day=2024-01-02"}, InputFiles: 3, InputBytes: 300, Records: 30}}}
	st := &TableState{PartitionAgeing: ag}
	if _, _, ok := planAgeing(pol, st); ok {
		t.Fatal("planned without a partition_ageing block")
	}
	pol.PartitionAgeing = config.AgeingPolicy{Declared: true, DeclRange: hcl.Range{Filename: "x/main.icewright.hcl", Start: hcl.Pos{Line: 7}}}
	if _, r, ok := planAgeing(pol, &TableState{PartitionAgeing: &PartitionAgeing{}}); ok || len(r) > 0 {
		t.Fatal("planned with nothing aged")
	}
	a, refusals, ok := planAgeing(pol, st)
	if !ok || len(refusals) > 0 || a.PartitionAgeing == nil || a.Validate() != nil {
		t.Fatalf("planned %v %+v %v", ok, a, refusals)
	}
	if want := "partition_ageing (main.icewright.hcl:7): day partitions of ts whose month ended 90d ago or more, into 1 month partitions of new spec 1, not the default"; a.Reason != want {
		t.Errorf("reason %q, want %q", a.Reason, want)
	}
	amb := &TableState{AgeingRefusal: "the default partition spec 0 has 2 day fields (a, b): which one dates a partition is ambiguous"}
	if _, r, ok := planAgeing(pol, amb); ok || len(r) != 1 || r[0].Action != string(AgePartitions) || !strings.Contains(r[0].Reason, "main.icewright.hcl:7): the default partition spec 0 has 2 day fields") {
		t.Errorf("ambiguous spec: planned %v, refusals %+v", ok, r)
	}
	// With default = true and nothing old yet: the action only makes the
	// coarser spec the default.
	pol.PartitionAgeing.Default.Origin = hcl.Range{Filename: "x/main.icewright.hcl", Start: hcl.Pos{Line: 9}}
	only := &TableState{PartitionAgeing: &PartitionAgeing{From: "day", To: "month", Column: "ts", TargetSpecID: 1, AddsSpec: true, SetsDefault: true, Groups: []AgeingGroup{}}}
	if a, r, ok := planAgeing(pol, only); !ok || len(r) > 0 || a.Validate() != nil ||
		a.Reason != "partition_ageing.default (main.icewright.hcl:9): no day partition of ts is old enough yet; new spec 1, made the default" {
		t.Errorf("default only: planned %v %q, refusals %+v", ok, a.Reason, r)
	}
	st.UnwritableSpecs = map[int]string{0: "partition spec 0 has 2 decimal fields"}
	if _, r, ok := planAgeing(pol, st); ok || len(r) != 1 || !strings.Contains(r[0].Reason, "spec 0, partition spec 0 has 2 decimal fields") {
		t.Errorf("unwritable spec: planned %v, refusals %+v", ok, r)
	}
}

// TestBoundAgeing: on a table changed since the plan, apply runs the fresh
// ageing at the approved cutoff, never a later window nor a default the
// plan did not approve; a changed rule skips it.
func TestBoundAgeing(t *testing.T) {
	group := func(p string) AgeingGroup {
		return AgeingGroup{Partition: p, Sources: []string{p + "-01"}, InputFiles: 1, InputBytes: 10, Records: 1}
	}
	mk := func(cutoff int64, setsDefault bool, groups ...string) Action {
		p := &PartitionAgeing{From: "day", To: "month", Column: "ts", TargetSpecID: 1, AddsSpec: true, CutoffMs: cutoff, AfterMs: 5, SetsDefault: setsDefault, Groups: []AgeingGroup{}}
		for _, g := range groups {
			p.Groups = append(p.Groups, group(g))
			p.InputFiles++
			p.InputBytes += 10
			p.Records++
		}
		return Action{Type: AgePartitions, PartitionAgeing: p}
	}
	approved := mk(100, false, "m=1", "m=2")
	b := Bound(approved, mk(200, true, "m=2", "m=3"))
	if b.Skip != "" || b.Action.Validate() != nil {
		t.Fatalf("bounded %+v", b)
	}
	got := b.Action.PartitionAgeing
	if got.CutoffMs != 100 || got.SetsDefault || len(got.Groups) != 1 || got.Groups[0].Partition != "m=2" || got.InputFiles != 1 ||
		len(b.NotApplied) != 1 || b.NotApplied[0] != "partition m=1: no longer to age" {
		t.Errorf("bounded %+v, notes %v", got, b.NotApplied)
	}
	if b := Bound(approved, mk(200, false, "m=3")); b.Skip == "" {
		t.Errorf("only later windows left: %+v", b)
	}
	changed := mk(100, false, "m=1")
	changed.PartitionAgeing.To = "year"
	if b := Bound(approved, changed); !strings.Contains(b.Skip, "changed since the plan") {
		t.Errorf("rule changed: %+v", b)
	}
}
