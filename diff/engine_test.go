package diff

import (
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// toyEngine plans a partition as its name, and refuses the partitions
// named in refuse.
type toyEngine struct{ refuse map[string]bool }

func (toyEngine) Name() string { return "spark" }

func (e toyEngine) Plan(d Delegation) (EnginePlan, string) {
	var vals []string
	for _, v := range d.Partition {
		vals = append(vals, v.Value)
	}
	key := strings.Join(vals, "/")
	if e.refuse[key] {
		return EnginePlan{}, "cannot bound " + key
	}
	return EnginePlan{Statement: "REWRITE " + d.Catalog + "." + strings.Join(d.Namespace, ".") + "." + d.Table + " " + key, Target: d.Table, Filter: key}, ""
}

func enginePolicy(above int64) *config.Effective {
	pol := &config.Effective{Catalog: "lake", Namespace: []string{"ns"}, Table: "t"}
	pol.TargetFileSize = config.Setting[int64]{Value: 100, Set: true}
	pol.Compaction = config.CompactionPolicy{
		Declared:      true,
		MinInputFiles: config.Setting[int]{Value: 2, Set: true},
		Engine:        set("spark", 12),
		EngineAbove:   set(above, 13),
	}
	return pol
}

func engineState(e Engine) *TableState {
	part := func(name string, sizes ...int64) PartitionStats {
		var n int64
		for _, s := range sizes {
			n += s
		}
		return PartitionStats{Partition: "p=" + name, CandidateSizes: sizes, DataFiles: int64(len(sizes)), DataBytes: n,
			Values: []PartitionValue{{Field: "p", Column: "p", Transform: "identity", Type: "string", Value: name}}}
	}
	return &TableState{Engine: e, Partitions: []PartitionStats{
		part("big", 40, 40),     // 80: above 50, to the engine
		part("small", 10, 10),   // 20: icewright'
		part("escaped", 30, 30), // 60: to the engine, whose files iceberg-go cannot open
	}}
}

// TestCompactDelegatesAboveTheBound: partitions above engine_above go to
// the engine, one call each with its statement and bound, their groups
// marked; the rest stay icewright'; commits count one per call plus one.
func TestCompactDelegatesAboveTheBound(t *testing.T) {
	st := engineState(toyEngine{})
	st.Partitions[2].EscapedFileURIs = 2
	tp := PlanTable(enginePolicy(50), st, testNow)
	if len(tp.Refusals) != 0 || len(tp.Actions) != 1 {
		t.Fatalf("plan = %+v", tp)
	}
	c := tp.Actions[0].Compact
	if len(c.EngineCalls) != 2 || c.Commits != 3 || len(c.Groups) != 3 || c.InputFiles != 6 {
		t.Fatalf("compact = %+v", c)
	}
	for i, want := range []string{"big", "escaped"} {
		call := c.EngineCalls[i]
		if call.Partition != "p="+want || call.Statement != "REWRITE lake.ns.t "+want || call.Filter != want || call.InputBytes == 0 ||
			!strings.Contains(call.Bound, "engine_above") {
			t.Errorf("call %d = %+v", i, call)
		}
	}
	for _, g := range c.Groups {
		if (g.Engine == "spark") == (g.Partition == "p=small") {
			t.Errorf("group %s engine %q", g.Partition, g.Engine)
		}
	}
	// With the bound above every partition, nothing is delegated and the
	// escaped partition is refused as icewright's own rewrite must.
	tp = PlanTable(enginePolicy(1000), st, testNow)
	if c := tp.Actions[0].Compact; len(c.EngineCalls) != 0 || c.Commits != 1 || len(tp.Refusals) != 1 {
		t.Fatalf("compact = %+v, refusals %+v", c, tp.Refusals)
	}
}

// TestCompactEngineRefusalInThePlan: a partition the engine cannot be
// bounded to is a refusal with the engine's reason and is not compacted
// (not by icewright either); without the engine (a session that cannot reach
// it), every delegated partition is refused.
func TestCompactEngineRefusalInThePlan(t *testing.T) {
	tp := PlanTable(enginePolicy(50), engineState(toyEngine{refuse: map[string]bool{"big": true}}), testNow)
	if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "cannot bound big") || !strings.Contains(tp.Refusals[0].Reason, "partition p=big") {
		t.Fatalf("refusals = %+v", tp.Refusals)
	}
	c := tp.Actions[0].Compact
	if len(c.EngineCalls) != 1 || len(c.Groups) != 2 || c.Partitions != 2 {
		t.Fatalf("compact = %+v", c)
	}
	tp = PlanTable(enginePolicy(50), engineState(nil), testNow)
	if len(tp.Refusals) != 2 || !strings.Contains(tp.Refusals[0].Reason, "cannot reach") {
		t.Fatalf("refusals without the engine = %+v", tp.Refusals)
	}
}

// schemaEngine records the schema each delegation carries.
type schemaEngine struct{ got *[]Column }

func (schemaEngine) Name() string { return "spark" }

func (e schemaEngine) Plan(d Delegation) (EnginePlan, string) {
	*e.got = d.Schema
	return EnginePlan{Statement: "REWRITE"}, ""
}

// TestDelegationCarriesTheSchema: the engine is given the table's columns,
// so it can refuse in the plan a sort or z-order key of a type it cannot
// order by (Spark's z-order refuses decimals at apply otherwise).
func TestDelegationCarriesTheSchema(t *testing.T) {
	var got []Column
	st := engineState(schemaEngine{got: &got})
	st.Schema = []Column{{ID: 1, Name: "p", Type: "string"}, {ID: 2, Name: "price", Type: "decimal(9, 2)"}}
	PlanTable(enginePolicy(50), st, testNow)
	if len(got) != 2 || got[1].Type != "decimal(9, 2)" {
		t.Fatalf("the delegation's schema = %+v, want the table's", got)
	}
}
