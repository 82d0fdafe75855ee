package diff

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkPlanTableLarge plans a table at docs/design.md §6's scale: 1M data files
// (all compaction candidates, 100 partitions), 10k snapshots with tags and
// branches, and 100k orphan candidates.
func BenchmarkPlanTableLarge(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	st := &TableState{Address: "lake.db.big", Properties: map[string]string{}}
	for p := range 100 {
		ps := PartitionStats{Partition: "p=" + string(rune('a'+p%26))}
		for range 10_000 {
			ps.CandidateSizes = append(ps.CandidateSizes, 1+r.Int64N(4<<20))
		}
		st.Partitions = append(st.Partitions, ps)
	}
	for i := range 10_000 {
		st.Snapshots = append(st.Snapshots, snap(int64(i+1), int64(i), time.Duration(10_000-i)*time.Minute))
	}
	st.CurrentSnapshotID = ptr(int64(10_000))
	st.Refs = []Ref{branch("main", 10_000), branch("audit", 5_000)}
	for i := range 50 {
		st.Refs = append(st.Refs, tag("t"+string(rune('a'+i%26))+string(rune('a'+i/26)), int64(1+r.IntN(10_000))))
	}
	st.Manifests = ManifestStats{Count: 5000, Bytes: 5000 << 20}
	st.Orphans = cleanScan(st)
	st.Orphans.Referenced = 10_000_000
	st.Orphans.ListedFiles = 10_100_000
	for i := range 100_000 {
		st.Orphans.Candidates = append(st.Orphans.Candidates, FileInfo{Path: "s3://b/t/data/" + string(rune('a'+i%26)), Size: 1, MtimeMs: ago(10 * day)})
	}
	pol := fullPolicy()
	pol.TargetFileSize = set(int64(128<<20), 3)
	pol.Compaction.MinFileSize = set(int64(96<<20), 5)
	pol.Compaction.MaxFileSize = set(int64(230<<20), 5)
	b.ResetTimer()
	for b.Loop() {
		tp := PlanTable(pol, st, testNow)
		if len(tp.Actions) < 4 {
			b.Fatalf("actions = %v, refusals %v", actionTypes(tp), tp.Refusals)
		}
	}
}
