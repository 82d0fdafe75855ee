package apply

import (
	"context"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/icewright/icewright/diff"
)

// While apply compacts, the Go soft memory limit is the one the compactions
// need (below the limit in force before, which stays the ceiling); after
// apply, the limit in force before is back. Without SetMemoryLimit (a
// user's GOMEMLIMIT) apply leaves it alone.
func TestApplySetsAndRestoresMemoryLimit(t *testing.T) {
	const before = 7 << 30 // a limit "the user" set; apply must come back to it
	old := debug.SetMemoryLimit(before)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	for _, set := range []bool{true, false} {
		e := newEnv(t, "")
		e.debtTable(orders, nil)
		e.debtTable("sales.items", nil)
		p := e.plan()
		for _, addr := range []string{"lake." + orders, "lake.sales.items"} {
			if actionOf(tablePlan(t, p, addr), diff.Compact) == nil {
				t.Fatalf("setup: no compaction planned for %s", addr)
			}
		}
		var (
			mu   sync.Mutex
			seen []int64 // the limit at each compaction progress event after the first bytes
		)
		opts := ApplyOptions{Version: "test", Parallelism: 2, Progress: func(ev Event) {
			if ev.Action == string(diff.Compact) && ev.Phase == PhaseProgress && ev.Done > 0 {
				mu.Lock()
				seen = append(seen, debug.SetMemoryLimit(-1))
				mu.Unlock()
			}
		}}
		if set {
			opts.SetMemoryLimit = debug.SetMemoryLimit
		}
		res, err := Apply(context.Background(), e.cfg, e.sess, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() {
			t.Fatalf("apply failed:\n%s", describe(res))
		}
		if len(seen) == 0 {
			t.Fatal("no compaction progress observed")
		}
		for _, got := range seen {
			switch {
			case set && (got >= before || got < 32<<20):
				t.Fatalf("SetMemoryLimit given: limit %d during compaction, want below %d and above the baseline", got, before)
			case !set && got != before:
				t.Fatalf("no SetMemoryLimit: limit %d during compaction, want %d untouched", got, before)
			}
		}
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Fatalf("after apply (set=%v) the limit is %d, want the previous %d", set, got, before)
		}
		t.Logf("set=%v: limits seen during compaction %v", set, seen)
	}
}

// While plan observes, the soft limit is PlanMemoryLimit for the tables
// observed at once, never above the limit in force before; afterwards the
// limit before is back.
func TestPlanSetsAndRestoresMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	e.debtTable("sales.items", nil)
	for _, tc := range []struct {
		before, want int64
		par          int
	}{
		{7 << 30, PlanMemoryLimit(2), 4}, // two tables: two at once
		{7 << 30, PlanMemoryLimit(1), 1},
		{100 << 20, 100 << 20, 4}, // a lower limit stays the ceiling
	} {
		debug.SetMemoryLimit(tc.before)
		var mu sync.Mutex
		var seen []int64
		_, err := Plan(context.Background(), e.cfg, e.sess, PlanOptions{Version: "test", Parallelism: tc.par,
			SetMemoryLimit: debug.SetMemoryLimit,
			Progress: func(ev Event) {
				if ev.Catalog != "" {
					return // the listing, before the tables are counted and the limit set
				}
				mu.Lock()
				seen = append(seen, debug.SetMemoryLimit(-1))
				mu.Unlock()
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) == 0 {
			t.Fatal("no progress events")
		}
		for _, got := range seen {
			if got != tc.want {
				t.Fatalf("before %d, parallelism %d: limit %d while planning, want %d", tc.before, tc.par, got, tc.want)
			}
		}
		if got := debug.SetMemoryLimit(-1); got != tc.before {
			t.Fatalf("after plan the limit is %d, want %d", got, tc.before)
		}
	}
}
