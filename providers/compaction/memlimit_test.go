package compaction

import (
	"math"
	"runtime/debug"
	"testing"
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
	lSmall, err := ProcessMemoryLimit(small, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	lSorted, err := ProcessMemoryLimit(sorted, oSorted)
	if err != nil {
		t.Fatal(err)
	}

	m := NewMemoryLimiter(debug.SetMemoryLimit)
	rel1, err := m.Hold(small, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != lSmall {
		t.Fatalf("one compaction: limit %d, want ProcessMemoryLimit %d", got, lSmall)
	}
	rel2, err := m.Hold(sorted, oSorted)
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
	rel, err := m.Hold(sorted, oSorted)
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
	r, err := none.Hold(small, oSmall)
	if err != nil {
		t.Fatal(err)
	}
	r()
	if got := debug.SetMemoryLimit(-1); got != lSmall/2 {
		t.Fatalf("a nil limiter changed the limit to %d", got)
	}
}
