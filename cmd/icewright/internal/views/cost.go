package views

import (
	"fmt"
	"math"
	"strings"

	"github.com/icewright/icewright/diff"
)

// cost is what the views print of an estimate: the quantities (Usage) and,
// when the table's storage has prices, the money they come to. Estimates
// are diff's (Action.Estimate); the views only add them up and render them
// (docs/cost.md has the formulas).
type cost struct {
	u diff.Usage
	// estimated and missing count the actions with and without an
	// estimate: a total over some actions only says so.
	estimated, missing int
	// priced is whether money is known: every table of the total has
	// prices (a table on local storage has none). pricedAny is whether some
	// has, and unpricedTables how many have none.
	priced         bool
	m              diff.Money
	pricedAny      bool
	unpricedTables int
}

// actionCost is one action's estimate, nil when the plan has none.
func actionCost(t *diff.TablePlan, a *diff.Action) *cost {
	if a.Estimate == nil {
		return nil
	}
	c := &cost{u: *a.Estimate, estimated: 1}
	c.m, c.priced = diff.Price(*a.Estimate, t.Pricing)
	c.pricedAny = c.priced
	return c
}

// tableCost is the total of a table's actions (diff.Estimated), priced
// as a whole (prices are linear); nil when no action has an estimate (a
// plan made before format 2.1).
func tableCost(t *diff.TablePlan) *cost {
	u, n, missing := diff.Estimated(t.Actions)
	if n == 0 {
		return nil
	}
	c := &cost{u: u, estimated: n, missing: missing}
	c.m, c.priced = diff.Price(u, t.Pricing)
	c.pricedAny = c.priced
	if !c.priced {
		c.unpricedTables = 1
	}
	return c
}

// planCost is the plan's total, as diff.Summarize puts it in the JSON
// summary (its estimate, and its money over the tables with prices); nil
// when no action has an estimate.
func planCost(p *diff.Plan) *cost {
	sum := summarize(p)
	if sum.EstimatedActions == 0 {
		return nil
	}
	return &cost{
		u: sum.Estimate, estimated: sum.EstimatedActions, missing: sum.Actions - sum.EstimatedActions,
		priced: sum.UnpricedTables == 0, m: sum.Cost, pricedAny: sum.PricedTables > 0, unpricedTables: sum.UnpricedTables,
	}
}

// CPUSeconds renders compute time: "0.42", "3.1", "1,204"; a time above
// zero too small for two decimals is "<0.01".
func CPUSeconds(s float64) string {
	switch {
	case s <= 0:
		return "0"
	case s < 0.005:
		return "<0.01"
	case s < 10:
		return fmt.Sprintf("%.2f", s)
	case s < 100:
		return fmt.Sprintf("%.1f", s)
	}
	return Count(int64(math.Round(s)))
}

// Payback renders how long the saving takes to repay the run
// (diff.Money.PaybackMonths): in days below two months, else in months,
// else in years; "never" when nothing is saved.
func Payback(m diff.Money) string {
	months, ok := m.PaybackMonths()
	if !ok {
		return "never"
	}
	const daysPerMonth = 30
	switch days := months * daysPerMonth; {
	case days < 1:
		return "under a day"
	case months < 2:
		return countOf(int64(math.Round(days)), "day", "days")
	case months < 24:
		return countOf(int64(math.Round(months)), "month", "months")
	}
	return countOf(int64(math.Round(months/12)), "year", "years")
}

// costCell is one column of a cost line: a value, right-aligned among the
// lines of a block, between a prefix and a suffix.
type costCell struct{ prefix, value, suffix string }

// costCells are the columns of a cost line: what the run costs, then what
// it saves. A zero is an empty cell; a column empty on every line of the
// block (money without prices, opens saved) is dropped by costBlock.
func costCells(c *cost) []costCell {
	u := c.u
	reqs := costCell{value: Count(u.Requests.Total()), suffix: plural(u.Requests.Total(), " request", " requests")}
	if u == (diff.Usage{}) {
		// An action that adds nothing to the run (one that shares the
		// commit of the action above it).
		reqs = costCell{value: "none"}
	}
	cells := []costCell{
		reqs,
		{prefix: "read ", value: bytesIf(u.BytesRead)},
		{prefix: "write ", value: bytesIf(u.BytesWritten)},
		{value: cpuIf(u.CPUSeconds), suffix: " CPU-s"},
		{value: c.moneyOf(c.m.Run)},
		{prefix: "frees ", value: bytesIf(u.BytesFreed)},
		{value: countIf(u.ScanOpensSaved), suffix: " fewer opens/scan"},
		{prefix: "saves ", value: c.savingOf(), suffix: "/month"},
	}
	return cells
}

// cost columns that are dropped when empty on every line.
const (
	colMoney    = 4
	colOpens    = 6
	colPerMonth = 7
)

// savingOf is the saving per month, "" when the action saves nothing (a
// property change): an empty cell, not "$0.00".
func (c *cost) savingOf() string {
	if c.m.SavingPerMonth == 0 {
		return ""
	}
	return c.moneyOf(c.m.SavingPerMonth)
}

func (c *cost) moneyOf(usd float64) string {
	if !c.priced {
		return ""
	}
	return diff.FormatUSD(usd)
}

// costBlock renders aligned cost lines: one per labelled cost, columns
// padded to the widest line, numbers right-aligned. label is styled by the
// caller's style function.
func costBlock(labels []string, costs []*cost, style []func(string) string) []string {
	rows := make([][]costCell, len(costs))
	keep := map[int]bool{}
	for i, c := range costs {
		rows[i] = costCells(c)
		if c.priced {
			keep[colMoney], keep[colPerMonth] = true, true
		}
		if c.u.ScanOpensSaved != 0 {
			keep[colOpens] = true
		}
	}
	ncol := len(rows[0])
	valW, cellW := make([]int, ncol), make([]int, ncol)
	labelW := 0
	for i, r := range rows {
		labelW = max(labelW, len(labels[i]))
		for j, cell := range r {
			valW[j] = max(valW[j], len(cell.value))
		}
	}
	cellsOf := func(r []costCell) []string {
		out := make([]string, ncol)
		for j, cell := range r {
			if (j == colMoney || j == colOpens || j == colPerMonth) && !keep[j] {
				continue
			}
			v := cell.value
			if v == "" {
				// A line without prices in a block with some: the column
				// stays, empty.
				out[j] = ""
				continue
			}
			out[j] = cell.prefix + fmt.Sprintf("%*s", valW[j], v) + cell.suffix
		}
		return out
	}
	rendered := make([][]string, len(rows))
	for i, r := range rows {
		rendered[i] = cellsOf(r)
		for j, s := range rendered[i] {
			cellW[j] = max(cellW[j], len(s))
		}
	}
	lines := make([]string, len(rows))
	for i, r := range rendered {
		// What the run costs | what it saves; a line that saves nothing
		// ends at its cost.
		var run, saves strings.Builder
		for j, s := range r {
			if cellW[j] == 0 {
				continue
			}
			part := &run
			if j > colMoney {
				part = &saves
			}
			part.WriteString("  " + fmt.Sprintf("%-*s", cellW[j], s))
		}
		line := style[i](fmt.Sprintf("%-*s", labelW+1, labels[i]+":")) + run.String()
		if strings.TrimSpace(saves.String()) != "" {
			line += "  |" + saves.String()
		}
		lines[i] = strings.TrimRight(line, " ")
		if n := costs[i].missing; n > 0 {
			lines[i] += fmt.Sprintf(" (%s without an estimate)", countOf(n, "action", "actions"))
		}
	}
	return lines
}

// costSentence is the plan's total in words, for the summary: "Cost: 1,204
// requests, 3.1 GiB read, 3.0 GiB written, 41.3 CPU-s, $0.52; frees 3.1
// GiB, 1,196 fewer opens a scan, saves $0.07/month; payback 7 months."
func costSentence(c *cost) string {
	u := c.u
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s read, %s written, %s CPU-s",
		countOf(u.Requests.Total(), "request", "requests"), Bytes(u.BytesRead), Bytes(u.BytesWritten), CPUSeconds(u.CPUSeconds))
	if c.priced {
		b.WriteString(", " + diff.FormatUSD(c.m.Run))
	}
	fmt.Fprintf(&b, "; frees %s", Bytes(u.BytesFreed))
	if u.ScanOpensSaved > 0 {
		fmt.Fprintf(&b, ", %s fewer opens a scan", Count(u.ScanOpensSaved))
	}
	if c.priced {
		fmt.Fprintf(&b, ", saves %s/month; payback %s", diff.FormatUSD(c.m.SavingPerMonth), Payback(c.m))
	}
	switch {
	case !c.priced && c.pricedAny:
		fmt.Fprintf(&b, "; no money total: %s no prices (local storage)", countOf(c.unpricedTables, "table has", "tables have"))
	case !c.priced:
		b.WriteString("; no prices for this storage, so no money")
	}
	if c.missing > 0 {
		fmt.Fprintf(&b, "; %s without an estimate", countOf(c.missing, "action", "actions"))
	}
	return b.String() + "."
}

// bytesIf is Bytes, or "" for 0: a cost line leaves a zero cell empty, so
// that a property change reads "2 requests" and not a row of zeros.
func bytesIf(n int64) string {
	if n == 0 {
		return ""
	}
	return Bytes(n)
}

// cpuIf is CPUSeconds, or "" for none.
func cpuIf(s float64) string {
	if s <= 0 {
		return ""
	}
	return CPUSeconds(s)
}

// countIf is Count, or "" for 0 (an empty cell).
func countIf(n int64) string {
	if n == 0 {
		return ""
	}
	return Count(n)
}

// otherTablesSentence is the plan's line for the run's read of other
// tables' references (diff.Summary.OtherTablesReferences): once per run,
// whichever deletion asks first, and in the cost above it; "" when the
// run reads none.
func otherTablesSentence(p *diff.Plan) string {
	sum := summarize(p)
	if sum.OtherTablesRead == 0 {
		return ""
	}
	u := sum.OtherTablesReferences
	line := fmt.Sprintf("%s, %s read", countOf(u.Requests.Total(), "request", "requests"), Bytes(u.BytesRead))
	if sum.OtherTablesCost != (diff.Money{}) {
		line += ", " + diff.FormatUSD(sum.OtherTablesCost.Run)
	}
	return line + fmt.Sprintf(" (%s, read once by the run's first deletion; in the cost above).", countOf(sum.OtherTablesRead, "table", "tables"))
}
