package config

import "testing"

func TestExcludedBy(t *testing.T) {
	c := &Config{Selectors: []*TablesBlock{
		{Pattern: "lake.sales.*", Exclude: []string{"lake.sales.tmp_*", "lake.sales.*"}},
		{Pattern: "lake.**"},
		{Pattern: "other.*.*", Exclude: []string{"other.x.y"}},
	}}
	got := c.ExcludedBy("lake.sales.tmp_1")
	if len(got) != 1 || got[0].Selector.Pattern != "lake.sales.*" || got[0].Exclude != "lake.sales.tmp_*" {
		t.Fatalf("ExcludedBy = %+v", got)
	}
	if got := c.ExcludedBy("lake.ops.t"); len(got) != 0 {
		t.Errorf("a matching selector without exclude reported: %+v", got)
	}
	if got := c.ExcludedBy("nowhere.a.b"); len(got) != 0 {
		t.Errorf("no selector matches, yet %+v", got)
	}
}
