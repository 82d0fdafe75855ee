package diff

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// A where reaches the selection (for providers) and the compact action, and
// the reason names its attribute and file:line.
func TestCompactWhere(t *testing.T) {
	pol := &config.Effective{}
	pol.TargetFileSize = config.Setting[int64]{Value: 100, Set: true}
	where := "event_ts >= '2026-11-03T00:00:00Z'"
	pol.Compaction = config.CompactionPolicy{
		Declared:      true,
		MinInputFiles: config.Setting[int]{Value: 2, Set: true},
		Where: config.Setting[string]{Value: where, Set: true,
			Origin: hcl.Range{Filename: "/cfg/main.icewright.hcl", Start: hcl.Pos{Line: 7}}},
	}
	if got := SelectionFor(pol).Where; got != where {
		t.Fatalf("selection where = %q", got)
	}
	st := &TableState{Partitions: []PartitionStats{{Partition: "d=1", CandidateSizes: []int64{10, 10}}}}
	a, _, ok := planCompact(pol, st)
	if !ok || a.Compact.Where != where {
		t.Fatalf("compact = %+v", a.Compact)
	}
	if want := `; compaction.where = "event_ts >= '2026-11-03T00:00:00Z'" (main.icewright.hcl:7)`; !strings.HasSuffix(a.Reason, want) {
		t.Fatalf("reason %q does not end with %q", a.Reason, want)
	}
	pol.Compaction.Where = config.Setting[string]{}
	if a, _, _ = planCompact(pol, st); a.Compact.Where != "" || strings.Contains(a.Reason, "where") {
		t.Fatalf("no where: compact %+v, reason %q", a.Compact, a.Reason)
	}
}
