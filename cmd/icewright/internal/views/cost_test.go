package views

import (
	"bytes"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// costPlan is designPlan with hand-set estimates on three of its actions
// (the numbers are diff's; the views only add and render them).
func costPlan() *diff.Plan {
	p := designPlan()
	acts := p.Tables[0].Actions
	acts[2].Estimate = &diff.Usage{ // compact
		Requests:  diff.Requests{Get: 1203 + 12, Put: 7*14 + 14, Head: 3},
		BytesRead: 3328599345 + 1_200_000, BytesWritten: 3300000000 + 60_000,
		FilesRead: 1203, FilesWritten: 7,
		BytesFreed: 3328599345, ScanOpensSaved: 1196, CPUSeconds: 41.3, PeakMemoryBytes: 512 << 20,
	}
	acts[3].Estimate = &diff.Usage{ // rewrite manifests
		Requests:  diff.Requests{Get: 240, Put: 5},
		BytesRead: 2_400_000, BytesWritten: 2_300_000, BytesFreed: 2_400_000, ScanOpensSaved: 236, CPUSeconds: 0.4,
	}
	acts[4].Estimate = &diff.Usage{ // expire
		Requests:  diff.Requests{Get: 215, Put: 2, BatchDelete: 1},
		BytesRead: 3_000_000, BytesWritten: 9_000, BytesFreed: 1_500_000_000, FilesDeleted: 640, CPUSeconds: 0.02,
	}
	return p
}

// pricedPlan is costPlan on S3 at the documented default prices.
func pricedPlan() *diff.Plan {
	p := costPlan()
	s3 := config.StoragePrices[0].Prices
	p.Tables[0].Pricing = &s3
	return p
}

func TestPlanCostLines(t *testing.T) {
	var buf bytes.Buffer
	if err := Plan(&buf, pricedPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	// One line under each estimated action and the table's total, as one
	// aligned block; the plan's total under the summary.
	for _, want := range []string{
		"      » compact 1,203 files (3.1 GiB) in 4 partitions into ~7 files (sort)\n" +
			"        cost:   1,330 requests  read 3.1 GiB  write 3.1 GiB  41.3 CPU-s  <$0.01  |  frees 3.1 GiB  1,196 fewer opens/scan  saves  $0.09/month\n" +
			"      » rewrite 240 manifests into ~4\n" +
			"        cost:     245 requests  read 2.3 MiB  write 2.2 MiB  0.40 CPU-s  <$0.01  |  frees 2.3 MiB    236 fewer opens/scan  saves <$0.01/month\n",
		"      - expire 214 snapshots older than 2d (oldest 41d); 3 kept (1 by tag \"q3-close\")\n" +
			"        cost:     218 requests  read 2.9 MiB  write 8.8 KiB  0.02 CPU-s  <$0.01  |  frees 1.4 GiB                          saves  $0.03/month\n",
		"        total:  1,793 requests  read 3.1 GiB  write 3.1 GiB  41.7 CPU-s  <$0.01  |  frees 4.5 GiB  1,432 fewer opens/scan  saves  $0.13/month (3 actions without an estimate)\n    }\n",
		"Plan: 1 table to change (6 actions, 2 destructive), 3 tables in policy.\n" +
			"Cost: 1,793 requests, 3.1 GiB read, 3.1 GiB written, 41.7 CPU-s, <$0.01; frees 4.5 GiB, 1,432 fewer opens a scan, saves $0.13/month; payback under a day; 3 actions without an estimate.\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing\n%s\nin\n%s", want, buf.String())
		}
	}
	// Without prices (local storage): quantities only, and the money
	// columns are gone, not empty.
	buf.Reset()
	if err := Plan(&buf, costPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"        cost:   1,330 requests  read 3.1 GiB  write 3.1 GiB  41.3 CPU-s  |  frees 3.1 GiB  1,196 fewer opens/scan\n",
		"Cost: 1,793 requests, 3.1 GiB read, 3.1 GiB written, 41.7 CPU-s; frees 4.5 GiB, 1,432 fewer opens a scan; no prices for this storage, so no money; 3 actions without an estimate.\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing\n%s\nin\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "$") {
		t.Errorf("money without prices:\n%s", buf.String())
	}
	// An action estimated at nothing (it shares the commit above) says so.
	p := costPlan()
	p.Tables[0].Actions[1].Estimate = &diff.Usage{}
	buf.Reset()
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if want := "      ~ sort_order = [] -> [\"event_ts DESC NULLS LAST\", \"bucket(16, user_id)\"]\n        cost:    none\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("missing\n%s\nin\n%s", want, buf.String())
	}
	// A plan without estimates (format 2.0) shows no cost at all.
	buf.Reset()
	if err := Plan(&buf, designPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "cost:") || strings.Contains(buf.String(), "Cost:") {
		t.Errorf("cost lines without estimates:\n%s", buf.String())
	}
}

// TestPlanMarkdownCostRow: the summary table gains the run's cost, the
// saving per month and the payback time, per table and in a Total row.
func TestPlanMarkdownCostRow(t *testing.T) {
	p := pricedPlan()
	// A second table on local storage: the total has no money then, and
	// says why.
	local := diff.TablePlan{Address: "lake.local.t", Actions: []diff.Action{{Type: diff.RewriteManifests,
		Manifests: &diff.ManifestsAction{ManifestsBefore: 30, EstimatedManifestsAfter: 1},
		Estimate:  &diff.Usage{Requests: diff.Requests{Get: 30, Put: 1}, BytesRead: 300_000, BytesWritten: 250_000, BytesFreed: 300_000, ScanOpensSaved: 29, CPUSeconds: 0.05}}}}
	for _, tc := range []struct {
		name string
		p    *diff.Plan
		want []string
	}{
		{"priced", p, []string{
			"\n**Cost:** 1,793 requests, 3.1 GiB read, 3.1 GiB written, 41.7 CPU-s, \\<$0.01; frees 4.5 GiB, 1,432 fewer opens a scan, saves $0.13/month; payback under a day; 3 actions without an estimate.\n",
			"| Table | Actions | Destructive | To rewrite | To delete | Cost | Saves | Payback |\n",
			"| `lake.analytics.clicks` | 6 | ⚠️ 2 | 3.1 GiB | 12 files (45.2 MiB) | <$0.01 | $0.13/month | under a day |\n",
			"| **Total** | 6 | ⚠️ 2 | 3.1 GiB | 12 files (45.2 MiB) | <$0.01 | $0.13/month | under a day |\n",
		}},
		{"mixed", func() *diff.Plan { q := pricedPlan(); q.Tables = append(q.Tables, local); return q }(), []string{
			"| `lake.local.t` | 1 | – | – | – | 0.05 CPU-s, 31 requests | 293.0 KiB freed | – |\n",
			"| **Total** | 7 | ⚠️ 2 | 3.1 GiB | 12 files (45.2 MiB) | 41.8 CPU-s, 1,824 requests | 4.5 GiB freed | – |\n",
			"no money total: 1 table has no prices (local storage)",
		}},
	} {
		var buf bytes.Buffer
		if err := PlanMarkdown(&buf, tc.p); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s: missing\n%s\nin\n%s", tc.name, want, buf.String())
			}
		}
	}
}

func TestPayback(t *testing.T) {
	for _, tc := range []struct {
		run, perMonth float64
		want          string
	}{
		{1, 0, "never"},
		{0.01, 100, "under a day"},
		{1, 1, "30 days"},
		{5, 1, "5 months"},
		{36, 1, "3 years"},
	} {
		if got := Payback(diff.Money{Run: tc.run, SavingPerMonth: tc.perMonth}); got != tc.want {
			t.Errorf("Payback(%v, %v) = %q, want %q", tc.run, tc.perMonth, got, tc.want)
		}
	}
}

// TestPlanSaysWhatWaits: a compaction a budget cut says, under its line,
// what waits for the next run: the planner's reason when it gave one, the
// counts otherwise.
func TestPlanSaysWhatWaits(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{`compaction.max_cost = 0.5 (main.icewright.hcl:9): 2 groups (20 MiB) wait for the next run`,
			"      » compact 1,203 files (3.1 GiB) in 4 partitions into ~7 files (sort)\n" +
				"          compaction.max_cost = 0.5 (main.icewright.hcl:9): 2 groups (20 MiB) wait for the next run\n"},
		{"", "into ~7 files (sort)\n          2 groups (20.0 MiB) wait for the next run\n"},
	} {
		p := pricedPlan()
		c := p.Tables[0].Actions[2].Compact
		c.SkippedGroups, c.SkippedBytes, c.SkippedReason = 2, 20<<20, tc.reason
		var buf bytes.Buffer
		if err := Plan(&buf, p, NewStyles(false)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("missing\n%s\nin\n%s", tc.want, buf.String())
		}
	}
}
