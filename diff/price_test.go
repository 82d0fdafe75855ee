package diff

import (
	"math"
	"testing"

	"github.com/icewright/icewright/config"
)

func TestPrice(t *testing.T) {
	if _, ok := Price(Usage{BytesFreed: 1}, nil); ok {
		t.Error("priced without prices")
	}
	p := &config.Prices{StorageGBMonth: 0.023, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.05, ScansPerMonth: 30}
	u := Usage{
		Requests:       Requests{List: 10, Get: 2000, Head: 1000, Put: 990, Delete: 500, BatchDelete: 7},
		CPUSeconds:     7200,
		BytesFreed:     50e9,
		ScanOpensSaved: 1000,
	}
	m, ok := Price(u, p)
	if !ok {
		t.Fatal("no money with prices")
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("requests", m.Requests, 1000.0/1000*0.005+3000.0/1000*0.0004) // deletes free
	near("cpu", m.CPU, 2*0.05)
	near("run", m.Run, m.Requests+m.CPU)
	near("storage", m.Storage, 50*0.023)
	near("reads", m.Reads, 1000*30*0.0004/1000)
	near("saving", m.SavingPerMonth, 50*0.023+1000*30*0.0004/1000)
	months, ok := m.PaybackMonths()
	near("payback", months, m.Run/m.SavingPerMonth)
	if !ok {
		t.Error("no payback with a saving")
	}
	if _, ok := (Money{Run: 1}).PaybackMonths(); ok {
		t.Error("payback without a saving")
	}
	var sum Money
	sum.Add(m)
	sum.Add(m)
	near("sum", sum.Run, 2*m.Run)
}

func TestFormatUSD(t *testing.T) {
	for v, want := range map[float64]string{0: "$0.00", 0.004: "<$0.01", 0.0099: "<$0.01", 0.01: "$0.01", 1.234: "$1.23", 1.235001: "$1.24", 1234.5: "$1234.50", -0.001: "-<$0.01", -2: "-$2.00"} {
		if got := FormatUSD(v); got != want {
			t.Errorf("FormatUSD(%v) = %q, want %q", v, got, want)
		}
	}
}

// A plan carries each table's prices: its storage's defaults on S3, none
// on local storage.
func TestPlanTablePricing(t *testing.T) {
	pol := emptyPolicy()
	pol.Pricing.ScansPerMonth = def(float64(config.DefaultScansPerMonth))
	st := linear(day)
	st.Location = "s3://lake/wh/db/t"
	tp := PlanTable(pol, st, testNow)
	if tp.Pricing == nil || *tp.Pricing != config.StoragePrices[0].Prices {
		t.Errorf("s3 table pricing = %+v, want the S3 defaults", tp.Pricing)
	}
	st.Location = "file:///wh/db/t"
	if tp := PlanTable(pol, st, testNow); tp.Pricing != nil {
		t.Errorf("local table pricing = %+v, want none", tp.Pricing)
	}
}

// The plan's summary sums every table's estimate, and its money over the
// tables with prices; the others are counted.
func TestSummarizeTotals(t *testing.T) {
	s3 := config.StoragePrices[0].Prices
	est := func(get int64, freed int64) *Usage { return &Usage{Requests: Requests{Get: get}, BytesFreed: freed} }
	p := &Plan{Tables: []TablePlan{
		{Address: "a", Pricing: &s3, Actions: []Action{{Type: ExpireSnapshots, Estimate: est(1000, 1e9)}, {Type: RemoveOrphanFiles, Estimate: est(1000, 0)}}},
		{Address: "b", Actions: []Action{{Type: ExpireSnapshots, Estimate: est(10, 5)}}},
		{Address: "c", Actions: []Action{}},
	}}
	Summarize(p)
	s := p.Summary
	if s.Estimate.Requests.Get != 2010 || s.Estimate.BytesFreed != 1e9+5 {
		t.Errorf("estimate %+v", s.Estimate)
	}
	want, _ := Price(Usage{Requests: Requests{Get: 2000}, BytesFreed: 1e9}, &s3)
	if s.Cost != want || s.PricedTables != 1 || s.UnpricedTables != 1 {
		t.Errorf("cost %+v unpriced %d, want %+v and 1", s.Cost, s.UnpricedTables, want)
	}
	if m, ok := p.Tables[0].Cost(); !ok || m != want {
		t.Errorf("table cost %+v", m)
	}
	if _, ok := p.Tables[1].Cost(); ok {
		t.Error("a table without prices has a cost")
	}
	empty := &Plan{Tables: []TablePlan{{Address: "c", Actions: []Action{}}}}
	Summarize(empty)
	if empty.Summary.Estimate != (Usage{}) || empty.Summary.Cost != (Money{}) || empty.Summary.PricedTables != 0 {
		t.Errorf("a plan without estimates has totals: %+v", empty.Summary)
	}
}

// A pricing block that leaves a price unset where the storage has no
// defaults is loud: the plan would show no money.
func TestPricingIncompleteWarns(t *testing.T) {
	pol := emptyPolicy()
	pol.Pricing = config.PricingPolicy{Declared: true, DeclRange: at(40), CPUHour: set(0.05, 41)}
	st := linear(day)
	st.Location = "file:///wh/db/t"
	tp := PlanTable(pol, st, testNow)
	if len(tp.Warnings) != 1 || tp.Warnings[0].Code != config.LintPricingPartial || tp.Pricing != nil ||
		tp.Warnings[0].Message != "the pricing block leaves storage_gb_month, put_per_1000, get_per_1000 unset and the table's storage (none) has no default prices: its plan shows quantities, not money" ||
		tp.Warnings[0].Origin != "main.icewright.hcl:40" {
		t.Errorf("warnings %+v, pricing %+v", tp.Warnings, tp.Pricing)
	}
	st.Location = "s3://lake/wh/db/t"
	if tp := PlanTable(pol, st, testNow); len(tp.Warnings) != 0 || tp.Pricing == nil || tp.Pricing.CPUHour != 0.05 {
		t.Errorf("s3: warnings %+v, pricing %+v", tp.Warnings, tp.Pricing)
	}
}
