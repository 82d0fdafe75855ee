package views

import (
	"bytes"
	"testing"

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

func TestPlanCostLines(t *testing.T) {
	var buf bytes.Buffer
	if err := Plan(&buf, costPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + buf.String())
}

func TestPlanMarkdownCostRow(t *testing.T) {
	var buf bytes.Buffer
	if err := PlanMarkdown(&buf, costPlan()); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + buf.String())
}
