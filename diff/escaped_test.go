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
		p := candidatePartition(name, sizes...)
		p.EscapedFileURIs = escaped
		return p
	}
	refusal := compactRefusal
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

// A partition with a file on another storage than the table location's
// (PartitionStats.ForeignFiles: the duckdb-iceberg corpus table
// generated_bounds, a local table whose 5,000 data files are s3:// paths)
// is not compacted: the table's IO cannot open it, and apply failed on the
// first one. The plan refuses it, naming the file and the table's storage,
// and compacts the other partitions.
func TestForeignStoragePartitionsRefused(t *testing.T) {
	const example = "s3://fake-bucket/d/0000000000/t.parquet"
	part := func(name string, foreign int64, sizes ...int64) PartitionStats {
		p := candidatePartition(name, sizes...)
		p.ForeignFiles = foreign
		return p
	}
	refusal := compactRefusal
	st := linear(1 * day)
	st.Location = "/w/generated_bounds"
	st.ForeignFile = example
	st.Partitions = []PartitionStats{
		part("d=1", 0, 10, 10),
		part("d=2", 3, 10, 10, 10),
		// A delete file on the other storage holds its partition too.
		part("d=3", 1, 10, 10),
	}
	tp := PlanTable(fullPolicy(), st, testNow)
	a := actionOf(tp, Compact)
	if a == nil || a.Compact.InputFiles != 2 || len(a.Compact.Groups) != 1 || a.Compact.Groups[0].Partition != "d=1" {
		t.Fatalf("want only d=1 compacted: %+v", a)
	}
	got := refusal(tp)
	for _, want := range []string{"5 data files in 2 partitions are not compacted", example, st.Location, "another storage"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal %q lacks %q", got, want)
		}
	}
	st.Partitions = st.Partitions[1:2]
	if tp = PlanTable(fullPolicy(), st, testNow); hasAction(tp, Compact) || refusal(tp) == "" {
		t.Fatalf("only refused partitions: want a refusal and no compaction: %v %+v", tp.Actions, tp.Refusals)
	}
	// The manifests a compaction would have added are not counted either:
	// no rewrite of one manifest into one follows a refused compaction.
	if hasAction(tp, RewriteManifests) && st.Manifests.Count <= 1 {
		t.Errorf("a manifest rewrite planned for the refused compaction's manifests: %v", tp.Actions)
	}
}

// candidatePartition is a partition whose data files, of these sizes, are
// all compaction candidates.
func candidatePartition(name string, sizes ...int64) PartitionStats {
	p := PartitionStats{Partition: name, DataFiles: int64(len(sizes)), CandidateSizes: sizes}
	for _, s := range sizes {
		p.DataBytes += s
		p.CandidateBytes += s
	}
	return p
}

// compactRefusal is the reason of the plan's first compact refusal, "" when
// there is none.
func compactRefusal(tp TablePlan) string {
	i := slices.IndexFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(Compact) })
	if i < 0 {
		return ""
	}
	return tp.Refusals[i].Reason
}
