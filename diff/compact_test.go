package diff

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// The vectors are iceberg-go's own PackEnd expectations (internal/utils_fifo_test.go)
// plus a larger lookback case.
func TestPackEnd(t *testing.T) {
	tests := []struct {
		name     string
		weights  []int64
		target   int64
		lookback int
		want     [][]int
	}{
		{name: "empty", target: 10, lookback: 1, want: nil},
		{name: "single", weights: []int64{7}, target: 10, lookback: 1, want: [][]int{{0}}},
		{name: "one bin", weights: []int64{3, 3, 4}, target: 10, lookback: 1, want: [][]int{{0, 1, 2}}},
		{name: "repeated evictions", weights: []int64{6, 7, 8, 9, 10}, target: 10, lookback: 1, want: [][]int{{0}, {1}, {2}, {3}, {4}}},
		{name: "exact fits", weights: []int64{6, 4, 10, 5, 5}, target: 10, lookback: 1, want: [][]int{{0, 1}, {2}, {3, 4}}},
		{name: "different directions", weights: []int64{1, 2, 3, 4, 5}, target: 8, lookback: 1, want: [][]int{{0, 1}, {2, 3}, {4}}},
		{name: "oversized and zero", weights: []int64{12, 1, 9, 15, 0, 10}, target: 10, lookback: 1, want: [][]int{{0}, {1, 2}, {3}, {4, 5}}},
		// With a lookback, later (earlier-in-slice) items fill older open bins.
		{name: "lookback fills earlier bins", weights: []int64{2, 6, 6, 6}, target: 8, lookback: 128, want: [][]int{{1}, {2}, {0, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := packEnd(tt.weights, tt.target, tt.lookback)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("packEnd(%v, %d) = %v, want %v", tt.weights, tt.target, got, tt.want)
			}
		})
	}
}

func TestIsCandidate(t *testing.T) {
	s := CompactionSelection{Target: 100, Min: 75, Max: 180, MinInputFiles: 5, DeleteFileThreshold: 5, DeleteRatio: 0.3}
	tests := []struct {
		name        string
		size        int64
		deletes     int
		records     int64
		deletedRows int64
		want        bool
	}{
		{"small", 74, 0, 10, 0, true},
		{"at min is optimal", 75, 0, 10, 0, false},
		{"at max is optimal", 180, 0, 10, 0, false},
		{"oversized", 181, 0, 10, 0, false},
		{"oversized but many deletes", 500, 5, 10, 0, true},
		{"right-sized with four deletes", 100, 4, 10, 0, false},
		{"deleted ratio reached", 100, 1, 10, 3, true},
		{"deleted ratio below", 100, 1, 10, 2, false},
		{"deleted rows capped at records", 500, 1, 10, 50, true},
		{"no records ignores ratio", 100, 1, 0, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.IsCandidate(tt.size, tt.deletes, tt.records, tt.deletedRows); got != tt.want {
				t.Fatalf("IsCandidate(%d, %d, %d, %d) = %v, want %v", tt.size, tt.deletes, tt.records, tt.deletedRows, got, tt.want)
			}
		})
	}
}

func TestSelectionForDefaults(t *testing.T) {
	pol := &config.Effective{}
	got := SelectionFor(pol)
	want := CompactionSelection{Target: 512 << 20, Min: 384 << 20, Max: (512 << 20) * 9 / 5, MinInputFiles: 5, DeleteFileThreshold: 5, DeleteRatio: 0.3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SelectionFor(empty) = %+v, want %+v", got, want)
	}
	pol.TargetFileSize = config.Setting[int64]{Value: 1000, Set: true}
	pol.Compaction.MinFileSize = config.Setting[int64]{Value: 100, Set: true}
	pol.Compaction.MaxFileSize = config.Setting[int64]{Value: 2000, Set: true}
	pol.Compaction.MinInputFiles = config.Setting[int]{Value: 2, Set: true}
	pol.Compaction.DeleteFileThreshold = config.Setting[int]{Value: 1, Set: true}
	got = SelectionFor(pol)
	want = CompactionSelection{Target: 1000, Min: 100, Max: 2000, MinInputFiles: 2, DeleteFileThreshold: 1, DeleteRatio: 0.3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SelectionFor(set) = %+v, want %+v", got, want)
	}
}

func TestCompactMaxBytesPerRun(t *testing.T) {
	pol := &config.Effective{}
	pol.TargetFileSize = config.Setting[int64]{Value: 100, Set: true}
	pol.Compaction = config.CompactionPolicy{
		Declared:       true,
		MinInputFiles:  config.Setting[int]{Value: 2, Set: true},
		MaxBytesPerRun: config.Setting[int64]{Value: 100, Set: true},
	}
	// Each group saves one file; per byte rewritten, c saves the most.
	st := &TableState{Partitions: []PartitionStats{
		{Partition: "a", CandidateSizes: []int64{40, 40}}, // 80: least per byte, last: 160 would pass 100, skipped
		{Partition: "b", CandidateSizes: []int64{30, 30}}, // 60: second (80)
		{Partition: "c", CandidateSizes: []int64{10, 10}}, // 20: first
	}}
	a, commits, ok := planCompact(pol, st)
	if !ok || commits != 1 {
		t.Fatalf("no compaction planned")
	}
	c := a.Compact
	if len(c.Groups) != 2 || c.Groups[0].Partition != "b" || c.Groups[1].Partition != "c" || c.InputBytes != 80 ||
		c.Partitions != 2 || c.SkippedGroups != 1 || c.SkippedBytes != 80 {
		t.Fatalf("compact = %+v", c)
	}
	if want := `compaction.max_bytes_per_run = "100" (default); 1 group (80 B) waits for the next run: the groups that save the most per byte rewritten (objects a scan no longer opens) go first`; c.SkippedReason != want {
		t.Errorf("skipped reason %q, want %q", c.SkippedReason, want)
	}
	// The first group is taken even when it alone exceeds the budget.
	pol.Compaction.MaxBytesPerRun.Value = 10
	a, _, _ = planCompact(pol, st)
	if len(a.Compact.Groups) != 1 || a.Compact.InputBytes != 20 || a.Compact.SkippedGroups != 2 {
		t.Fatalf("compact = %+v", a.Compact)
	}
}

// A max_cost below the whole run's estimate plans the most valuable
// partitions first (the largest saving per month per byte rewritten) and
// says what waits; without prices it is refused, loudly.
func TestCompactMaxCost(t *testing.T) {
	pol := compactPolicy()
	st := compactState()
	// Three partitions of ten 1 MiB files; "many" of forty 256 KiB files
	// saves the most per byte, "few" of two 5 MiB files the least.
	st.Partitions = nil
	add := func(name string, n int, size int64) {
		sizes := make([]int64, n)
		for i := range sizes {
			sizes[i] = size
		}
		st.Partitions = append(st.Partitions, PartitionStats{Partition: name, DataFiles: int64(n), DataBytes: int64(n) * size, CandidateSizes: sizes})
	}
	add("few", 2, 5<<20)
	add("ten", 10, 1<<20)
	add("many", 40, 256<<10)
	whole := PlanTable(pol, st, testNow)
	full := findAction(t, whole, Compact)
	if len(full.Compact.Groups) != 3 || full.Compact.SkippedGroups != 0 {
		t.Fatalf("without a budget: %+v", full.Compact)
	}
	fullCost, _ := Price(*full.Estimate, whole.Pricing)

	// A budget of the fixed part, "many" and a cent: "ten" and "few" wait.
	prices := *whole.Pricing
	run := compactFixed(st, true, 1, 0, 0)
	run.Add(compactGroupUsage(st, "binpack", full.Compact.Groups[2], &st.Partitions[2]))
	budget := runCost(run, prices) + 0.000001
	if budget >= fullCost.Run {
		t.Fatalf("budget %v not below the whole run's %v", budget, fullCost.Run)
	}
	pol.Compaction.MaxCost = set(budget, 9)
	tp := PlanTable(pol, st, testNow)
	a := findAction(t, tp, Compact)
	c := a.Compact
	if len(c.Groups) != 1 || c.Groups[0].Partition != "many" || c.SkippedGroups != 2 || c.SkippedBytes != 20<<20 {
		t.Fatalf("with max_cost: groups %+v skipped %d (%d bytes)", c.Groups, c.SkippedGroups, c.SkippedBytes)
	}
	if m, _ := Price(*a.Estimate, tp.Pricing); m.Run > budget {
		t.Errorf("the planned run costs %v, above max_cost %v", m.Run, budget)
	}
	if !strings.HasPrefix(c.SkippedReason, "compaction.max_cost = ") || !strings.Contains(c.SkippedReason, "(main.icewright.hcl:9)") ||
		!strings.Contains(c.SkippedReason, "2 groups (20 MiB) wait for the next run") || !strings.Contains(c.SkippedReason, "saving per month") {
		t.Errorf("skipped reason %q", c.SkippedReason)
	}

	// max_cpu_hours likewise.
	pol.Compaction.MaxCost = def(0.0)
	pol.Compaction.MaxCPUHours = set((run.CPUSeconds+0.0001)/3600, 10)
	c = findAction(t, PlanTable(pol, st, testNow), Compact).Compact
	if len(c.Groups) != 1 || c.Groups[0].Partition != "many" || !strings.HasPrefix(c.SkippedReason, "compaction.max_cpu_hours = ") {
		t.Fatalf("with max_cpu_hours: groups %+v, reason %q", c.Groups, c.SkippedReason)
	}

	// No prices (local storage): max_cost is refused, nothing compacted.
	pol.Compaction.MaxCPUHours = def(0.0)
	pol.Compaction.MaxCost = set(1.0, 9)
	st.Location = "file:///wh/db/t"
	tp = PlanTable(pol, st, testNow)
	if slices.Contains(actionTypes(tp), Compact) || len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "needs prices") {
		t.Errorf("max_cost without prices: actions %v refusals %+v", actionTypes(tp), tp.Refusals)
	}
}

// TestStaleSortPartitionOneGroup: a partition with files written under
// another sort order is one group of all its candidates, a lone
// well-sized file included and whatever min_input_files, and the reason
// says why; without stale files the same sizes plan nothing.
func TestStaleSortPartitionOneGroup(t *testing.T) {
	pol := &config.Effective{}
	pol.Compaction.Declared = true
	pol.Compaction.Strategy = config.Setting[string]{Value: "sort", Set: true}
	pol.SortOrder = config.Setting[[]config.SortField]{Value: []config.SortField{{Column: "v", Transform: "identity"}}, Set: true}
	sel := SelectionFor(pol)
	st := &TableState{SortOrder: []SortField{{Transform: "identity", Column: "v"}}, Partitions: []PartitionStats{
		{Partition: "r=eu", DataFiles: 1, CandidateSizes: []int64{sel.Min + 1}, CandidatePaths: []string{"eu/1"}, StaleSortFiles: 1},
		{Partition: "r=us", DataFiles: 3, CandidateSizes: []int64{sel.Min + 1, 10, sel.Max + 1}, CandidatePaths: []string{"us/1", "us/2", "us/3"}, StaleSortFiles: 2},
		{Partition: "r=ap", DataFiles: 1, CandidateSizes: []int64{10}, CandidatePaths: []string{"ap/1"}},
	}}
	a, _, ok := planCompact(pol, st)
	if !ok || len(a.Compact.Groups) != 2 {
		t.Fatalf("planned %v: %+v", ok, a.Compact)
	}
	for i, want := range []CompactGroup{
		{Partition: "r=eu", InputFiles: 1, InputBytes: sel.Min + 1, EstimatedOutputFiles: 1, StaleSortFiles: 1, Files: []string{"eu/1"}},
		{Partition: "r=us", InputFiles: 3, InputBytes: sel.Min + sel.Max + 12, EstimatedOutputFiles: int((sel.Min + sel.Max + 12 + sel.Target - 1) / sel.Target), StaleSortFiles: 2, Files: []string{"us/1", "us/2", "us/3"}},
	} {
		if !reflect.DeepEqual(a.Compact.Groups[i], want) {
			t.Errorf("group %d = %+v, want %+v", i, a.Compact.Groups[i], want)
		}
	}
	if !strings.Contains(a.Reason, "; 3 files written under another sort order than the rewrite's, taken whatever their size: compaction.strategy = \"sort\"") {
		t.Errorf("reason %q", a.Reason)
	}
	for i := range st.Partitions {
		st.Partitions[i].StaleSortFiles = 0
	}
	if a, _, ok := planCompact(pol, st); ok {
		t.Errorf("without stale files: planned %+v", a.Compact)
	}
}

// TestSortPartitionOneGroup: under sort and z-order a partition is one group
// of all its bins (the rewrite merges them: providers PlanConfig
// PerPartition), under binpack one group per bin.
func TestSortPartitionOneGroup(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		groups   int
	}{{"binpack", 2}, {"sort", 1}, {"zorder", 1}} {
		t.Run(tc.strategy, func(t *testing.T) {
			pol := &config.Effective{}
			pol.Compaction.Declared = true
			pol.Compaction.Strategy = config.Setting[string]{Value: tc.strategy, Set: true}
			pol.Compaction.MinInputFiles = config.Setting[int]{Value: 2, Set: true}
			if tc.strategy == "zorder" {
				pol.Compaction.ZOrderColumns = config.Setting[[]string]{Value: []string{"a", "b"}, Set: true}
			}
			sel := SelectionFor(pol)
			third := sel.Target / 3
			sizes := []int64{third, third, third, third, third, third}
			st := &TableState{Partitions: []PartitionStats{{Partition: "r=eu", DataFiles: 6, CandidateSizes: sizes}}}
			a, _, ok := planCompact(pol, st)
			if !ok || len(a.Compact.Groups) != tc.groups {
				t.Fatalf("planned %v: %+v", ok, a.Compact)
			}
			files, bytes := 0, int64(0)
			for _, g := range a.Compact.Groups {
				files += g.InputFiles
				bytes += g.InputBytes
			}
			if files != 6 || bytes != 6*third {
				t.Errorf("groups take %d files, %d bytes; want 6, %d", files, bytes, 6*third)
			}
		})
	}
}

// TestCompactGroupsNameTheirFiles: each planned group names exactly the
// candidates the packer put in it (their sizes sum to its input bytes),
// no file is in two groups, and the whole-partition merge of a sort keeps
// every bin's files.
func TestCompactGroupsNameTheirFiles(t *testing.T) {
	rnd := rand.New(rand.NewPCG(42, 7))
	for _, strategy := range []string{"binpack", "sort"} {
		for range 50 {
			sel := CompactionSelection{Target: 1000, Min: 750, Max: 1800, MinInputFiles: 1 + rnd.IntN(3), DeleteFileThreshold: 5, Strategy: strategy}
			p := PartitionStats{Partition: "p", DeleteFiles: 1}
			size := map[string]int64{}
			for i := range 1 + rnd.IntN(40) {
				n := 1 + rnd.Int64N(740)
				path := fmt.Sprintf("f%d", i)
				p.CandidateSizes = append(p.CandidateSizes, n)
				p.CandidatePaths = append(p.CandidatePaths, path)
				size[path] = n
			}
			seen := map[string]bool{}
			for _, g := range sel.partitionGroups(p) {
				var sum int64
				for _, f := range g.Files {
					if seen[f] {
						t.Fatalf("%s: %s in two groups", strategy, f)
					}
					seen[f] = true
					sum += size[f]
				}
				if len(g.Files) != g.InputFiles || sum != g.InputBytes {
					t.Fatalf("%s: group of %d files (%d bytes) names %v (%d bytes)", strategy, g.InputFiles, g.InputBytes, g.Files, sum)
				}
			}
		}
	}
}
