package diff

import (
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// Plans that never converged on tables other engines wrote (issue 14, item
// 2): after one apply the next plan must be empty, so an action that
// changes nothing must not be planned in the first place.

// A rewrite of one file into one file (no deletes) changes nothing;
// min_input_files = 1 planned it on every run. A file of an older spec is
// no exception: the rewrite keeps the group's spec (duckdb-hive-partitioned
// in the corpus was compacted again after every apply).
func TestCompactLoneFileIsNoAction(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(p *PartitionStats, st *TableState)
		compact bool
	}{
		{name: "lone small file", edit: func(*PartitionStats, *TableState) {}},
		{name: "two small files", edit: func(p *PartitionStats, _ *TableState) {
			p.CandidateSizes = append(p.CandidateSizes, 10)
			p.DataFiles++
		}, compact: true},
		{name: "lone file with deletes", edit: func(p *PartitionStats, _ *TableState) { p.DeleteFiles = 1 }, compact: true},
		{name: "lone file of an older spec", edit: func(p *PartitionStats, st *TableState) { st.DefaultSpecID = 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(1 * day)
			p := PartitionStats{Partition: "", DataFiles: 1, DataBytes: 10, Records: 1, SmallFiles: 1, CandidateSizes: []int64{10}, CandidateBytes: 10}
			tt.edit(&p, st)
			st.Partitions = []PartitionStats{p}
			pol := fullPolicy()
			pol.Compaction.MinInputFiles = set(1, 6)
			tp := PlanTable(pol, st, testNow)
			if got := hasAction(tp, Compact); got != tt.compact {
				t.Fatalf("compact planned = %v, want %v (actions %v)", got, tt.compact, tp.Actions)
			}
		})
	}
}

// A compaction the rewrite cannot run is a refusal in the plan, not an
// apply that fails: strategy sort with no sort order anywhere, or a
// problem providers found (an equality delete on a column a file lacks).
// The table's other actions are still planned.
func TestCompactBlockedIsRefused(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(pol *config.Effective, st *TableState)
		refused string // a part of the refusal; "" = compaction planned
	}{
		{name: "binpack", edit: func(*config.Effective, *TableState) {}},
		{name: "sort with the table's order", edit: func(pol *config.Effective, st *TableState) {
			pol.Compaction.Strategy = set("sort", 5)
			st.SortOrder = []SortField{{Transform: "identity", Column: "id"}}
		}},
		{name: "sort with the policy's order", edit: func(pol *config.Effective, _ *TableState) {
			pol.Compaction.Strategy = set("sort", 5)
			pol.SortOrder = set([]config.SortField{{Transform: "identity", Column: "id"}}, 7)
		}},
		{name: "sort with no order", edit: func(pol *config.Effective, _ *TableState) {
			pol.Compaction.Strategy = set("sort", 5)
		}, refused: "needs a sort order"},
		{name: "provider problem", edit: func(_ *config.Effective, st *TableState) {
			st.CompactProblem = "an equality delete on column x that data.parquet lacks"
		}, refused: "equality delete on column x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Old snapshots: expiry is planned beside the compaction.
			st := linear(40*day, 30*day, 1*day)
			st.Partitions = []PartitionStats{{DataFiles: 2, DataBytes: 20, Records: 2, SmallFiles: 2, CandidateSizes: []int64{10, 10}, CandidateBytes: 20}}
			pol := fullPolicy()
			pol.SortOrder = config.Setting[[]config.SortField]{}
			tt.edit(pol, st)
			tp := PlanTable(pol, st, testNow)
			i := slices.IndexFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(Compact) })
			if tt.refused == "" {
				if !hasAction(tp, Compact) || i >= 0 {
					t.Fatalf("want compact planned, not refused: actions %v refusals %v", tp.Actions, tp.Refusals)
				}
				return
			}
			if hasAction(tp, Compact) || i < 0 || !strings.Contains(tp.Refusals[i].Reason, tt.refused) {
				t.Fatalf("want compact refused with %q: actions %v refusals %v", tt.refused, tp.Actions, tp.Refusals)
			}
			if !hasAction(tp, ExpireSnapshots) {
				t.Errorf("the table's other actions went with the refusal: %v", tp.Actions)
			}
		})
	}
}

// rewrite_manifests is planned only when the rewrite can lower the count:
// manifests of different specs, and delete manifests, do not merge.
// max_count counts the manifests the plan's compaction adds.
func TestRewriteManifestsOnlyWhenTheyMerge(t *testing.T) {
	data := func(spec int) ManifestInfo { return ManifestInfo{SpecID: spec, Data: true, Length: 1000} }
	del := ManifestInfo{SpecID: 0, Data: false, Length: 1000}
	live := func(m ManifestInfo, n int64) ManifestInfo { m.LiveFiles = n; return m }
	tests := []struct {
		name    string
		files   []ManifestInfo
		compact bool // the plan compacts two small files first
		max     int
		want    bool
	}{
		{name: "two data manifests of one spec", files: []ManifestInfo{data(0), data(0)}, max: 1, want: true},
		{name: "one per spec", files: []ManifestInfo{data(0), data(1)}, max: 1},
		{name: "data and delete manifests", files: []ManifestInfo{data(0), del}, max: 1},
		{name: "delete manifests only", files: []ManifestInfo{del, del, del}, max: 1},
		{name: "within max_count", files: []ManifestInfo{data(0), data(0)}, max: 2},
		// The compaction's commit drops the manifest of the two files it
		// rewrites and adds one of its output and one of the removed
		// entries: 2 > max_count = 1 when rewrite_manifests runs, so it is
		// planned now, not next time.
		{name: "compaction pushes over max_count", files: []ManifestInfo{live(data(0), 2)}, compact: true, max: 1, want: true},
		{name: "compaction within max_count", files: []ManifestInfo{live(data(0), 2)}, compact: true, max: 2},
		// A manifest with a file more stays (rewritten): 3 > 2.
		{name: "compaction leaves a manifest", files: []ManifestInfo{live(data(0), 3)}, compact: true, max: 2, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(1 * day)
			st.Manifests = ManifestStats{Count: len(tt.files), Files: tt.files}
			for _, f := range tt.files {
				st.Manifests.Bytes += f.Length
				if f.Data {
					st.Manifests.DataCount++
				} else {
					st.Manifests.DeleteCount++
				}
			}
			if tt.compact {
				st.Partitions = []PartitionStats{{DataFiles: 2, DataBytes: 20, CandidateSizes: []int64{10, 10}, CandidateBytes: 20,
					CandidatePaths: []string{"a.parquet", "b.parquet"}, CandidateManifests: []int{0, 0}}}
			}
			pol := fullPolicy()
			pol.Manifests.MaxCount = set(tt.max, 31)
			tp := PlanTable(pol, st, testNow)
			if hasAction(tp, Compact) != tt.compact {
				t.Fatalf("compact planned = %v, want %v", hasAction(tp, Compact), tt.compact)
			}
			if got := hasAction(tp, RewriteManifests); got != tt.want {
				t.Fatalf("rewrite_manifests planned = %v, want %v (actions %v)", got, tt.want, tp.Actions)
			}
		})
	}
}

// The current snapshot of a ref is never listed for expiry unless the
// plan's own commits replace it as main's head: a lone file that used to
// be "compacted" made the plan list main's head, which apply then kept.
func TestExpiryNeverListsAHeadThePlanKeeps(t *testing.T) {
	tests := []struct {
		name     string
		files    []int64 // candidate sizes in the one partition
		wantHead bool    // main's current head is listed
	}{
		{name: "lone file: no compaction, head kept", files: []int64{10}},
		{name: "no candidates, head kept"},
		{name: "compaction commits: old head expires", files: []int64{10, 10}, wantHead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(30*day, 20*day, 10*day)
			st.Refs = append(st.Refs, tag("t", 2))
			st.Partitions = []PartitionStats{{DataFiles: int64(max(1, len(tt.files))), CandidateSizes: tt.files}}
			pol := fullPolicy()
			pol.Compaction.MinInputFiles = set(1, 6)
			tp := PlanTable(pol, st, testNow)
			var listed []int64
			for _, a := range tp.Actions {
				if a.Type == ExpireSnapshots {
					listed = a.Expire.SnapshotIDs
				}
			}
			if got := slices.Contains(listed, *st.CurrentSnapshotID); got != tt.wantHead {
				t.Fatalf("head %d listed = %v, want %v (listed %v)", *st.CurrentSnapshotID, got, tt.wantHead, listed)
			}
			if slices.Contains(listed, 2) {
				t.Fatalf("tag head 2 listed: %v", listed)
			}
		})
	}
}

// A format v1 table whose snapshots name their manifests inline has no
// manifest list: the orphan plan must not call its referenced set
// incomplete for that (issue 14, item 4).
func TestOrphansInlineManifests(t *testing.T) {
	tests := []struct {
		name         string
		manifestList string
		lists        int64
		want         bool // refused
	}{
		{name: "inline manifests, no list", manifestList: "", lists: 0},
		{name: "manifest list referenced", manifestList: "s3://b/t/metadata/snap-1.avro", lists: 1},
		{name: "manifest list missing from the set", manifestList: "s3://b/t/metadata/snap-1.avro", lists: 0, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(10 * day)
			st.FormatVersion = 1
			st.Snapshots[0].ManifestList = tt.manifestList
			st.Orphans = cleanScan(st)
			st.Orphans.Categories["manifest_list"] = tt.lists
			tp := PlanTable(fullPolicy(), st, testNow)
			refused := slices.ContainsFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(RemoveOrphanFiles) })
			if refused != tt.want {
				t.Fatalf("refused = %v, want %v: %+v", refused, tt.want, tp.Refusals)
			}
		})
	}
}

func hasAction(tp TablePlan, typ ActionType) bool {
	return slices.ContainsFunc(tp.Actions, func(a Action) bool { return a.Type == typ })
}
