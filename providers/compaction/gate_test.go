package compaction

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The gate admits needs while they fit together, one need above the whole
// budget alone, and lets a waiter in when a release makes room.
func TestMemoryGate(t *testing.T) {
	g := newMemoryGate(100)
	ctx := context.Background()
	if err := g.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(ctx, 40); err != nil {
		t.Fatal(err)
	}
	admitted := make(chan struct{})
	go func() {
		if err := g.acquire(ctx, 30); err == nil {
			close(admitted)
		}
	}()
	select {
	case <-admitted:
		t.Fatal("a need of 30 was admitted beside 100 of 100 in use")
	case <-time.After(50 * time.Millisecond):
	}
	g.release(40)
	select {
	case <-admitted:
	case <-time.After(5 * time.Second):
		t.Fatal("a need of 30 still waits with 60 of 100 in use")
	}
	g.release(60)
	g.release(30)
	if err := g.acquire(ctx, 500); err != nil {
		t.Fatal("a need above the budget must run alone:", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g.acquire(cctx, 1); err == nil {
		t.Fatal("acquire beside a need above the budget returned without waiting")
	}
}

// At the defaults (one group per CPU, as memory allows) the groups of a
// partitioned table overlap in time; with a budget one group's need fills,
// they run one after the other.
func TestGroupsRunConcurrentlyWithinBudget(t *testing.T) {
	env := newEnv(t)
	run := func(budget int64) int {
		tbl := env.create(t, tableSpec{name: fmt.Sprint("conc", budget), partitioned: true, order: testOrder()})
		tbl = appendMany(t, tbl, 6, 3000, regions)
		groups := groupsAll(t, tbl)
		var mu sync.Mutex
		running, most := 0, 0
		_, err := Run(context.Background(), tbl, groups, Options{
			Strategy: Sort, TargetFileSize: 64 << 20, MemoryBudget: budget, MaxConcurrentGroups: 2,
			Progress: func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				switch e.Phase {
				case "started":
					running++
					most = max(most, running)
				case "written", "failed":
					running--
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return most
	}
	if most := run(0); most != 2 {
		t.Fatalf("default budget: at most %d groups at once, want 2", most)
	}
	// One group's need is above 24 MiB (groupNeed's fixed part).
	if most := run(24 << 20); most != 1 {
		t.Fatalf("24 MiB budget: %d groups at once, want 1", most)
	}
}
