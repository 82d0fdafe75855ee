package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/icewright/icewright/config"
)

// budgetCandidate is one group compaction could rewrite, before the run's
// budgets (max_bytes_per_run, max_cost, max_cpu_hours) choose.
type budgetCandidate struct {
	partition int // index in TableState.Partitions
	group     CompactGroup
	toEngine  bool // its partition goes to compaction.engine
}

// withinBudgets chooses the groups of a run, by partition: every group
// when no budget is set; otherwise the groups with the largest saving per
// byte rewritten first (with prices, the saving per month in money; without,
// the objects a scan no longer opens), each taken while the run's estimate
// stays within every budget (max_bytes_per_run always takes its first
// group, as the rewrite does) and the others counted skipped in act, with
// the reason. The rewrite takes the plan's groups, which fit.
func withinBudgets(pol *config.Effective, st *TableState, act *CompactAction, cands []budgetCandidate, prices config.Prices, priced bool) map[int][]CompactGroup {
	c := pol.Compaction
	maxBytes, maxCost, maxCPU := c.MaxBytesPerRun.Value, c.MaxCost.Value, c.MaxCPUHours.Value
	out := map[int][]CompactGroup{}
	if maxBytes <= 0 && maxCost <= 0 && maxCPU <= 0 {
		for _, cd := range cands {
			out[cd.partition] = append(out[cd.partition], cd.group)
		}
		return out
	}
	usage := make([]Usage, len(cands))
	value := make([]float64, len(cands))
	for i, cd := range cands {
		g := cd.group
		if cd.toEngine {
			g.Engine = "engine" // the engine's work: only its saving counts
		}
		usage[i] = compactGroupUsage(st, act.Strategy, g, &st.Partitions[cd.partition])
		if g.InputBytes > 0 {
			value[i] = float64(usage[i].ScanOpensSaved) / float64(g.InputBytes)
			if m, ok := Price(usage[i], &prices); ok && priced {
				value[i] = m.SavingPerMonth / float64(g.InputBytes)
			}
		}
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case value[a] > value[b]:
			return -1
		case value[a] < value[b]:
			return 1
		}
		return 0
	})
	// The run's fixed part (its planning and a commit) counts against the
	// money and CPU budgets first; the planner does not know what runs
	// before it, and counts its commit as the plan's first.
	run := compactFixed(st, true, 1, 0, 0)
	var bytes int64
	taken := 0
	keep := make([]bool, len(cands))
	hit := map[string]bool{}
	for _, i := range order {
		u := usage[i]
		next := run
		next.Add(u)
		g := cands[i].group
		over := ""
		switch {
		case maxBytes > 0 && taken > 0 && bytes+g.InputBytes > maxBytes:
			over = "max_bytes_per_run"
		case maxCost > 0 && priced && runCost(next, prices) > maxCost:
			over = "max_cost"
		case maxCPU > 0 && next.CPUSeconds/3600 > maxCPU:
			over = "max_cpu_hours"
		}
		if over != "" {
			hit[over] = true
			act.SkippedGroups++
			act.SkippedBytes += g.InputBytes
			continue
		}
		keep[i] = true
		taken++
		bytes += g.InputBytes
		run = next
	}
	for i, cd := range cands {
		if keep[i] {
			out[cd.partition] = append(out[cd.partition], cd.group)
		}
	}
	if act.SkippedGroups > 0 {
		act.SkippedReason = skippedReason(c, hit, run, prices, priced, act)
	}
	return out
}

// runCost is the money of a run's estimate.
func runCost(u Usage, prices config.Prices) float64 {
	m, _ := Price(u, &prices)
	return m.Run
}

// skippedReason says which budgets left groups waiting, with what the run
// keeps.
func skippedReason(c config.CompactionPolicy, hit map[string]bool, run Usage, prices config.Prices, priced bool, act *CompactAction) string {
	var parts []string
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if hit["max_bytes_per_run"] {
		parts = append(parts, reason("compaction.max_bytes_per_run", quote(config.FormatSizeExact(c.MaxBytesPerRun.Value)), c.MaxBytesPerRun.Origin, c.DeclRange))
	}
	if hit["max_cost"] {
		parts = append(parts, reason("compaction.max_cost", num(c.MaxCost.Value), c.MaxCost.Origin, c.DeclRange)+
			fmt.Sprintf(": the run is estimated at %s", FormatUSD(runCost(run, prices))))
	}
	if hit["max_cpu_hours"] {
		parts = append(parts, reason("compaction.max_cpu_hours", num(c.MaxCPUHours.Value), c.MaxCPUHours.Origin, c.DeclRange)+
			fmt.Sprintf(": the run is estimated at %.2f CPU-hours", run.CPUSeconds/3600))
	}
	by := "objects a scan no longer opens"
	if priced {
		by = "saving per month at the table's prices"
	}
	verb := "waits"
	if act.SkippedGroups != 1 {
		verb = "wait"
	}
	return fmt.Sprintf("%s; %s (%s) %s for the next run: the groups that save the most per byte rewritten (%s) go first",
		strings.Join(parts, "; "), config.CountOf(act.SkippedGroups, "group", "groups"), config.FormatSize(act.SkippedBytes), verb, by)
}
