package compaction

import (
	"context"
	"math"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
)

// Compactions running at once share the baseline and add their own
// shares; the last release restores the limit in force before the first
// Hold, which also caps every limit set in between.
func TestMemoryLimiterSumsAndRestores(t *testing.T) {
	old := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	e := newEnv(t)
	small := e.create(t, tableSpec{name: "small"})
	sorted := e.create(t, tableSpec{name: "sorted", order: testOrder()})
	oSmall := Options{TargetFileSize: 8 << 20}
	oSorted := Options{Strategy: Sort, TargetFileSize: 128 << 20}
	lSmall, err := ProcessMemoryLimit(small, nil, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	lSorted, err := ProcessMemoryLimit(sorted, nil, oSorted)
	if err != nil {
		t.Fatal(err)
	}

	m := NewMemoryLimiter(debug.SetMemoryLimit)
	rel1, err := m.Hold(small, nil, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != lSmall {
		t.Fatalf("one compaction: limit %d, want ProcessMemoryLimit %d", got, lSmall)
	}
	rel2, err := m.Hold(sorted, nil, oSorted)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := debug.SetMemoryLimit(-1), lSmall+lSorted-processBaseline; got != want {
		t.Fatalf("two compactions: limit %d, want %d (one baseline, both shares)", got, want)
	}
	rel1()
	rel1() // a second call is a no-op
	if got := debug.SetMemoryLimit(-1); got != lSorted {
		t.Fatalf("after the first release: limit %d, want %d", got, lSorted)
	}
	rel2()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after the last release: limit %d, want the previous (none)", got)
	}

	// A lower limit in force (GOMEMLIMIT, or a caller's) is the ceiling.
	debug.SetMemoryLimit(lSmall / 2)
	rel, err := m.Hold(sorted, nil, oSorted)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != lSmall/2 {
		t.Fatalf("limit %d raised above the one in force %d", got, lSmall/2)
	}
	rel()
	if got := debug.SetMemoryLimit(-1); got != lSmall/2 {
		t.Fatalf("after release: %d, want %d back", got, lSmall/2)
	}

	var none *MemoryLimiter
	r, err := none.Hold(small, nil, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	r()
	if got := debug.SetMemoryLimit(-1); got != lSmall/2 {
		t.Fatalf("a nil limiter changed the limit to %d", got)
	}
}

// arrowBytes, from the files' metadata alone, is within a quarter of what
// the group's rows really take as the Arrow batches a sort run holds.
func TestArrowBytesEstimatesTheRun(t *testing.T) {
	e := newEnv(t)
	tbl := e.create(t, tableSpec{name: "est", partitioned: true, order: testOrder()})
	tbl = appendMany(t, tbl, 6, 3000, regions)
	for _, g := range groupsAll(t, tbl) {
		var held int64
		err := readGroup(context.Background(), tbl, g, nil, func(rec arrow.RecordBatch) error {
			c, err := compactBatch(rec, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			held += util.TotalRecordSize(c)
			c.Release()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		est := arrowBytes(tbl.Schema(), g)
		if est < held*3/4 || est > held*5/4 {
			t.Errorf("group %s: estimated %d Arrow bytes, the run holds %d", g.Partition, est, held)
		}
	}
}

// With the planned groups the limit is what the groups that may run at
// once need (the largest ones, as many as run at once), an eighth more,
// and the baseline; never above the options' own bound.
func TestProcessMemoryLimitFromGroups(t *testing.T) {
	e := newEnv(t)
	tbl := e.create(t, tableSpec{name: "lim", partitioned: true, order: testOrder()})
	tbl = appendMany(t, tbl, 6, 3000, regions[:3])
	tbl = appendMany(t, tbl, 6, 9000, regions[3:])
	groups := groupsAll(t, tbl)
	o := Options{Strategy: Sort, TargetFileSize: 128 << 20, MaxConcurrentGroups: 2}
	bound, err := ProcessMemoryLimit(tbl, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ProcessMemoryLimit(tbl, groups, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := resolve(tbl, o)
	if err != nil {
		t.Fatal(err)
	}
	rowGroup := rowGroupBytes(tbl.Properties(), cfg.target, cfg.rowGroupCap())
	var needs []int64
	for _, g := range groups {
		needs = append(needs, groupNeed(tbl.Schema(), g, Sort, rowGroup))
	}
	slices.Sort(needs)
	want := (needs[len(needs)-1]+needs[len(needs)-2])*9/8 + processBaseline
	if got != want || got >= bound {
		t.Fatalf("limit %d, want %d (the two largest needs of %v, an eighth more, the baseline), below the bound %d", got, want, needs, bound)
	}
	// Binpack keeps twice its groups' needs (all stream, no run), below
	// the bound without groups.
	ob := o
	ob.Strategy = Binpack
	bbound, err := ProcessMemoryLimit(tbl, nil, ob)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = ProcessMemoryLimit(tbl, groups, ob); err != nil {
		t.Fatal(err)
	}
	var bneeds []int64
	for _, g := range groups {
		bneeds = append(bneeds, groupNeed(tbl.Schema(), g, Binpack, rowGroup))
	}
	slices.Sort(bneeds)
	bwant := min(2*(bneeds[len(bneeds)-1]+bneeds[len(bneeds)-2]), bbound-processBaseline) + processBaseline
	if got != bwant {
		t.Fatalf("binpack limit %d, want %d (twice the two largest needs of %v, the baseline; bound %d)", got, bwant, bneeds, bbound)
	}
	// A budget one group fills: the groups run one at a time.
	o.MemoryBudget = needs[len(needs)-1]
	got, err = ProcessMemoryLimit(tbl, groups, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := needs[len(needs)-1]*9/8 + processBaseline; got != min(want, o.MemoryBudget+processBaseline) {
		t.Fatalf("budget of one group: limit %d, want %d", got, want)
	}
}
