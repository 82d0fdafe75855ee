package diff

import (
	"slices"
	"strings"
	"testing"
)

// A partition with a file named by a file: URI whose path changes when
// decoded (PartitionStats.EscapedFileURIs) is not compacted: iceberg-go
// would read another name than the one its writer used. The plan refuses
// it, saying which file and why, and compacts the other partitions; a
// partition whose only candidate is a lone file is no action, not a
// refusal.
func TestEscapedFileURIPartitionsRefused(t *testing.T) {
	const example = "file:///w/t/data/ts=2023-08-22T09%3A15%3A20/a.parquet"
	part := func(name string, escaped int64, sizes ...int64) PartitionStats {
		p := PartitionStats{Partition: name, DataFiles: int64(len(sizes)), CandidateSizes: sizes, EscapedFileURIs: escaped}
		for _, s := range sizes {
			p.DataBytes += s
			p.CandidateBytes += s
		}
		return p
	}
	refusal := func(tp TablePlan) string {
		i := slices.IndexFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(Compact) })
		if i < 0 {
			return ""
		}
		return tp.Refusals[i].Reason
	}
	st := linear(1 * day)
	st.EscapedFileURI = example
	st.Partitions = []PartitionStats{
		part("d=2023-08-22", 0, 10, 10),
		part("ts=2023-08-22T09:15:20", 3, 10, 10, 10),
		// A delete file named by such a URI holds its partition too.
		part("ts=2023-05-15T14:30:45", 1, 10, 10),
	}
	tp := PlanTable(fullPolicy(), st, testNow)
	a := actionOf(tp, Compact)
	if a == nil || a.Compact.InputFiles != 2 || len(a.Compact.Groups) != 1 || a.Compact.Groups[0].Partition != "d=2023-08-22" {
		t.Fatalf("want only d=2023-08-22 compacted: %+v", a)
	}
	got := refusal(tp)
	for _, want := range []string{"5 data files in 2 partitions are not compacted", example, "percent-decoded", "rewrite_data_files"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal %q lacks %q", got, want)
		}
	}
	st.Partitions = st.Partitions[1:]
	if tp = PlanTable(fullPolicy(), st, testNow); hasAction(tp, Compact) || refusal(tp) == "" {
		t.Fatalf("only refused partitions: want a refusal and no compaction: %v %+v", tp.Actions, tp.Refusals)
	}
	st.Partitions = []PartitionStats{part("ts=2023-08-22T09:15:20", 1, 10)}
	pol := fullPolicy()
	pol.Compaction.MinInputFiles = set(1, 6)
	if tp = PlanTable(pol, st, testNow); hasAction(tp, Compact) || refusal(tp) != "" {
		t.Fatalf("a lone file is no action, not a refusal: %v %+v", tp.Actions, tp.Refusals)
	}
}
