package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPartitionAgeingBlock: the block decodes with its defaults, and a
// transform that is not a time grain, a `to` not coarser than `from` and
// a bad duration are errors at the attribute's file:line:col.
func TestPartitionAgeingBlock(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": baseCatalog + `
table "lake.db.events" {
  partition_ageing {
    after = "30d"
  }
}
`}, LoadOptions{})
	eff, ok := cfg.Resolve("lake.db.events")
	if !ok {
		t.Fatal("table not resolved")
	}
	ag := eff.PartitionAgeing
	if !ag.Declared || ag.After.Value != 30*24*time.Hour || ag.From.Value != "day" || ag.To.Value != "month" || ag.Default.Value {
		t.Errorf("decoded %+v", ag)
	}
	for _, c := range []struct{ block, want string }{
		{`from = "week"`, `main.icewright.hcl:10:12: error: Invalid partition_ageing from`},
		{`to = "decade"`, `main.icewright.hcl:10:10: error: Invalid partition_ageing to`},
		{`from = "month"
    to   = "day"`, `main.icewright.hcl:11:5: error: partition_ageing not to a coarser transform`},
		{`from = "day"
    to   = "day"`, `main.icewright.hcl:11:5: error: partition_ageing not to a coarser transform`},
		{`after = "ninety days"`, `main.icewright.hcl:10:13: error: Invalid duration`},
	} {
		_, diags := Load(writeDir(t, map[string]string{"main.icewright.hcl": baseCatalog + `
table "lake.db.events" {
  partition_ageing {
    ` + c.block + `
  }
}
`}), LoadOptions{})
		got := diagLines(diags)
		if !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, c.want) }) {
			t.Errorf("%s: diagnostics %v, want %q", c.block, got, c.want)
		}
	}
}
