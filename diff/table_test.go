package diff

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

func actionTypes(tp TablePlan) []ActionType {
	out := []ActionType{}
	for _, a := range tp.Actions {
		out = append(out, a.Type)
	}
	return out
}

func findAction(t *testing.T, tp TablePlan, typ ActionType) Action {
	t.Helper()
	for _, a := range tp.Actions {
		if a.Type == typ {
			return a
		}
	}
	t.Fatalf("plan has no %s action; actions: %v, refusals: %v", typ, actionTypes(tp), tp.Refusals)
	return Action{}
}

func TestEmptyPolicyIsInPolicy(t *testing.T) {
	st := linear(10*day, 9*day, 8*day)
	st.Properties = map[string]string{"anything": "x"}
	st.SortOrder = []SortField{{Transform: "identity", Column: "a"}}
	tp := PlanTable(emptyPolicy(), st, testNow)
	if !tp.Empty() || tp.Actions == nil {
		t.Fatalf("plan = %+v, want empty with non-nil actions", tp)
	}
	if tp.Observed.Snapshots != 3 || *tp.Observed.CurrentSnapshotID != 3 || tp.Observed.TableUUID != "u-1" {
		t.Fatalf("observed = %+v", tp.Observed)
	}
}

func TestUpdateProperties(t *testing.T) {
	tests := []struct {
		name       string
		derived    map[string]config.Setting[string]
		remove     []string
		have       map[string]string
		wantSet    map[string]string
		wantBefore map[string]string
		wantRemove []string
		wantReason []string
	}{
		{
			name:    "equal",
			derived: map[string]config.Setting[string]{"write.parquet.compression-codec": set("zstd", 40)},
			have:    map[string]string{"write.parquet.compression-codec": "zstd", "other": "1"},
		},
		{
			name:    "ignored iceberg-go key",
			derived: map[string]config.Setting[string]{"schema.name-mapping.default": set("[]", 40)},
			have:    map[string]string{"schema.name-mapping.default": "[{...}]"},
			remove:  []string{"schema.name-mapping.default"},
		},
		{
			name:       "changed and new",
			derived:    map[string]config.Setting[string]{"write.parquet.compression-codec": set("zstd", 40), "write.target-file-size-bytes": set("100", 3)},
			have:       map[string]string{"write.parquet.compression-codec": "snappy", "untouched": "v"},
			wantSet:    map[string]string{"write.parquet.compression-codec": "zstd", "write.target-file-size-bytes": "100"},
			wantBefore: map[string]string{"write.parquet.compression-codec": "snappy"},
			wantReason: []string{`properties["write.parquet.compression-codec"] = "zstd" (main.icewright.hcl:40)`, `target_file_size = "100" (main.icewright.hcl:3)`},
		},
		{
			name:       "retention keys name their attributes",
			derived:    map[string]config.Setting[string]{"history.expire.max-snapshot-age-ms": set("172800000", 11)},
			have:       map[string]string{"history.expire.max-snapshot-age-ms": "432000000"},
			wantSet:    map[string]string{"history.expire.max-snapshot-age-ms": "172800000"},
			wantBefore: map[string]string{"history.expire.max-snapshot-age-ms": "432000000"},
			wantReason: []string{`snapshot_retention.max_age = "2d" (main.icewright.hcl:11)`},
		},
		{
			name:       "remove only present keys",
			remove:     []string{"legacy.key", "absent.key"},
			have:       map[string]string{"legacy.key": "old"},
			wantSet:    map[string]string{},
			wantBefore: map[string]string{"legacy.key": "old"},
			wantRemove: []string{"legacy.key"},
			wantReason: []string{`remove_properties = ["legacy.key"] (main.icewright.hcl:41)`},
		},
		{
			name:   "remove absent keys only",
			remove: []string{"absent.key"},
			have:   map[string]string{"x": "y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := fullPolicy()
			pol.DerivedProperties = tt.derived
			if tt.remove != nil {
				pol.RemoveProperties = set(tt.remove, 41)
			}
			st := linear()
			st.Properties = tt.have
			tp := PlanTable(pol, st, testNow)
			if tt.wantSet == nil {
				if slices.Contains(actionTypes(tp), UpdateProperties) {
					t.Fatalf("unexpected update_properties: %+v", tp.Actions[0].Properties)
				}
				return
			}
			a := findAction(t, tp, UpdateProperties)
			if a.Destructive {
				t.Fatal("update_properties marked destructive")
			}
			if !reflect.DeepEqual(a.Properties.Set, tt.wantSet) || !reflect.DeepEqual(a.Properties.Before, tt.wantBefore) || !reflect.DeepEqual(a.Properties.Remove, tt.wantRemove) {
				t.Fatalf("change = %+v, want set %v before %v remove %v", a.Properties, tt.wantSet, tt.wantBefore, tt.wantRemove)
			}
			for _, r := range tt.wantReason {
				if !strings.Contains(a.Reason, r) {
					t.Errorf("reason %q lacks %q", a.Reason, r)
				}
			}
		})
	}
}

func TestReplaceSortOrder(t *testing.T) {
	want := []config.SortField{
		{Transform: "identity", Column: "event_ts", Descending: true, NullsFirst: false},
		{Transform: "bucket[16]", Column: "user_id", NullsFirst: true},
	}
	same := []SortField{
		{Transform: "", Column: "event_ts", Descending: true},
		{Transform: "Bucket[16]", Column: "user_id", NullsFirst: true},
	}
	tests := []struct {
		name   string
		set    bool
		policy []config.SortField
		have   []SortField
		action bool
	}{
		{"not in policy", false, nil, same, false},
		{"equal modulo spelling", true, want, same, false},
		{"unsorted table", true, want, nil, true},
		{"direction", true, want, []SortField{{Column: "event_ts", Descending: false}, same[1]}, true},
		{"null order", true, want, []SortField{{Column: "event_ts", Descending: true, NullsFirst: true}, same[1]}, true},
		{"transform", true, want, []SortField{same[0], {Transform: "bucket[8]", Column: "user_id", NullsFirst: true}}, true},
		{"column", true, want, []SortField{same[0], {Transform: "bucket[16]", Column: "account_id", NullsFirst: true}}, true},
		{"extra field", true, want[:1], same, true},
		{"policy unsorted, table sorted", true, []config.SortField{}, same, true},
		{"both unsorted", true, []config.SortField{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := emptyPolicy()
			if tt.set {
				pol.SortOrder = set(tt.policy, 7)
			}
			st := linear()
			st.SortOrder = tt.have
			tp := PlanTable(pol, st, testNow)
			if !tt.action {
				if !tp.Empty() {
					t.Fatalf("unexpected actions %v", actionTypes(tp))
				}
				return
			}
			a := findAction(t, tp, ReplaceSortOrder)
			if got, want := a.SortOrder.After, sortStrings(sortFieldsFromConfig(tt.policy)); !reflect.DeepEqual(got, want) {
				t.Fatalf("after = %q, want %q", got, want)
			}
			if a.SortOrder.Before == nil || len(a.SortOrder.Before) != len(tt.have) {
				t.Fatalf("before = %#v for %v", a.SortOrder.Before, tt.have)
			}
			if !strings.HasSuffix(a.Reason, "(main.icewright.hcl:7)") || !strings.HasPrefix(a.Reason, "sort_order = [") {
				t.Fatalf("reason = %q", a.Reason)
			}
		})
	}
}

func TestSortFieldString(t *testing.T) {
	tests := map[string]SortField{
		"event_ts DESC NULLS LAST":            {Transform: "identity", Column: "event_ts", Descending: true},
		"bucket(16, user_id) ASC NULLS FIRST": {Transform: "bucket[16]", Column: "user_id", NullsFirst: true},
		"day(ts) ASC NULLS FIRST":             {Transform: "day", Column: "ts", NullsFirst: true},
		"truncate(4, name) DESC NULLS FIRST":  {Transform: "truncate[4]", Column: "name", Descending: true, NullsFirst: true},
	}
	for want, f := range tests {
		if got := f.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", f, got, want)
		}
	}
}

func TestCompact(t *testing.T) {
	pol := fullPolicy() // target 100, min 75, max 180, min_input_files 2
	pol.SnapshotRetention.Declared = false
	pol.OrphanFiles.Declared = false
	st := linear(1 * day)
	st.Partitions = []PartitionStats{
		{SpecID: 0, Partition: "day=1", CandidateSizes: []int64{10, 20, 30, 40, 50}},
		{SpecID: 0, Partition: "day=2", CandidateSizes: []int64{10}}, // below min_input_files
		{SpecID: 1, Partition: "day=1", CandidateSizes: nil},
		{SpecID: 1, Partition: "day=3", CandidateSizes: []int64{60, 60}}, // two bins of one file each: dropped
	}
	tp := PlanTable(pol, st, testNow)
	a := findAction(t, tp, Compact)
	c := a.Compact
	// PackEnd from the end: 50+40 -> bin A (90), 30 -> bin B, 20 -> B (50), 10 -> A (100).
	wantGroups := []CompactGroup{{SpecID: 0, Partition: "day=1", InputFiles: 5, InputBytes: 150, EstimatedOutputFiles: 2}}
	packed := packEnd([]int64{10, 20, 30, 40, 50}, 100, packingLookback)
	if len(packed) == 2 {
		wantGroups = []CompactGroup{
			{SpecID: 0, Partition: "day=1", InputFiles: len(packed[0]), EstimatedOutputFiles: 1},
			{SpecID: 0, Partition: "day=1", InputFiles: len(packed[1]), EstimatedOutputFiles: 1},
		}
		sizes := []int64{10, 20, 30, 40, 50}
		for g, bin := range packed {
			for _, i := range bin {
				wantGroups[g].InputBytes += sizes[i]
			}
		}
	}
	if !reflect.DeepEqual(c.Groups, wantGroups) {
		t.Fatalf("groups = %+v, want %+v (packed %v)", c.Groups, wantGroups, packed)
	}
	if c.InputFiles != 5 || c.InputBytes != 150 || c.Partitions != 1 || c.Strategy != "binpack" || c.TargetFileSize != 100 || c.Commits != 1 {
		t.Fatalf("compact = %+v", c)
	}
	if a.Reason != `compaction.min_file_size = "75" (default; block at main.icewright.hcl:5)` {
		t.Fatalf("reason = %q", a.Reason)
	}

	t.Run("not declared", func(t *testing.T) {
		p := fullPolicy()
		p.Compaction.Declared = false
		if slices.Contains(actionTypes(PlanTable(p, st, testNow)), Compact) {
			t.Fatal("compact without a compaction block")
		}
	})
	t.Run("nothing to pack", func(t *testing.T) {
		s2 := linear(1 * day)
		s2.Partitions = []PartitionStats{{Partition: "a", CandidateSizes: []int64{10}}}
		if slices.Contains(actionTypes(PlanTable(pol, s2, testNow)), Compact) {
			t.Fatal("compact with fewer candidates than min_input_files")
		}
	})
	t.Run("sort strategy uses the policy order", func(t *testing.T) {
		p := fullPolicy()
		p.Compaction.Strategy = set("sort", 8)
		p.SortOrder = set([]config.SortField{{Transform: "identity", Column: "ts", Descending: true}}, 9)
		a := findAction(t, PlanTable(p, st, testNow), Compact)
		if a.Compact.Strategy != "sort" || !reflect.DeepEqual(a.Compact.SortOrder, []string{"ts DESC NULLS LAST"}) {
			t.Fatalf("compact = %+v", a.Compact)
		}
	})
	t.Run("partial progress commits per group", func(t *testing.T) {
		p := fullPolicy()
		p.Compaction.PartialProgress = set(true, 9)
		s2 := linear(1 * day)
		for i := range 23 {
			s2.Partitions = append(s2.Partitions, PartitionStats{Partition: string(rune('a' + i)), CandidateSizes: []int64{10, 10}})
		}
		a := findAction(t, PlanTable(p, s2, testNow), Compact)
		if len(a.Compact.Groups) != 23 || a.Compact.Commits != 23 {
			t.Fatalf("groups %d commits %d, want 23 and 23", len(a.Compact.Groups), a.Compact.Commits)
		}
	})
}

func TestRewriteManifests(t *testing.T) {
	tests := []struct {
		count     int
		bytes     int64
		wantAfter int // 0: no action
	}{
		{3, 100, 0},
		{4, 100, 1},
		{40, 20 << 20, 3},
		{40, 16 << 20, 2},
		{5, 80 << 20, 0}, // already at target size: nothing to merge
	}
	for _, tt := range tests {
		pol := emptyPolicy()
		pol.Manifests = fullPolicy().Manifests // max_count 3, target 8MiB
		st := linear(1 * day)
		st.Manifests = ManifestStats{Count: tt.count, Bytes: tt.bytes}
		tp := PlanTable(pol, st, testNow)
		if tt.wantAfter == 0 {
			if !tp.Empty() {
				t.Errorf("count %d: unexpected %v", tt.count, actionTypes(tp))
			}
			continue
		}
		a := findAction(t, tp, RewriteManifests)
		if a.Manifests.ManifestsBefore != tt.count || a.Manifests.EstimatedManifestsAfter != tt.wantAfter {
			t.Errorf("count %d bytes %d: %+v, want after %d", tt.count, tt.bytes, a.Manifests, tt.wantAfter)
		}
		if a.Reason != "manifests.max_count = 3 (main.icewright.hcl:31)" {
			t.Errorf("reason = %q", a.Reason)
		}
	}
}

func TestActionOrder(t *testing.T) {
	pol := fullPolicy()
	pol.SortOrder = set([]config.SortField{{Column: "a"}}, 7)
	pol.DerivedProperties = map[string]config.Setting[string]{"k": set("v", 40)}
	st := linear(10*day, 9*day, 8*day)
	st.Partitions = []PartitionStats{{CandidateSizes: []int64{1, 2, 3}}}
	st.Manifests = ManifestStats{Count: 10, Bytes: 1000}
	st.Orphans = cleanScan(st)
	st.Orphans.Candidates = []FileInfo{{Path: "s3://b/t/data/x.parquet", Size: 5, MtimeMs: ago(4 * day)}}
	st.Orphans.Referenced = 100
	tp := PlanTable(pol, st, testNow)
	want := []ActionType{UpdateProperties, ReplaceSortOrder, Compact, RewriteManifests, ExpireSnapshots, RemoveOrphanFiles}
	if got := actionTypes(tp); !reflect.DeepEqual(got, want) {
		t.Fatalf("actions = %v (refusals %v), want %v", got, tp.Refusals, want)
	}
	for _, a := range tp.Actions {
		destructive := a.Type == ExpireSnapshots || a.Type == RemoveOrphanFiles
		if a.Destructive != destructive {
			t.Errorf("%s destructive = %v", a.Type, a.Destructive)
		}
		if !strings.Contains(a.Reason, "main.icewright.hcl:") {
			t.Errorf("%s reason %q has no file:line", a.Type, a.Reason)
		}
	}
	// Compaction and the manifest rewrite each add a snapshot on main, so
	// with min_snapshots = 1 all three existing snapshots go.
	e := findAction(t, tp, ExpireSnapshots).Expire
	if e.SnapshotsAddedByPlan != 2 || !reflect.DeepEqual(e.SnapshotIDs, []int64{1, 2, 3}) {
		t.Fatalf("expire = %+v", e)
	}
}

func TestRewriteManifestsExact(t *testing.T) {
	pol := emptyPolicy()
	pol.Manifests = config.ManifestPolicy{Declared: true, DeclRange: at(30), MaxCount: set(3, 31), TargetSize: set(int64(100), 32)}
	small := func(spec int, n int64) ManifestInfo { return ManifestInfo{SpecID: spec, Data: true, Length: n} }
	tests := []struct {
		name  string
		files []ManifestInfo
		after int // 0: no action
	}{
		{"small data manifests merge", []ManifestInfo{small(0, 30), small(0, 30), small(0, 30), small(0, 30)}, 2},
		{"specs pack apart, deletes stay", []ManifestInfo{small(0, 10), small(1, 10), small(0, 10), small(1, 10), {Data: false, Length: 5}}, 3},
		{"already optimal: every bin one manifest", []ManifestInfo{small(0, 100), small(0, 100), small(0, 100), small(0, 100)}, 0},
		{"only delete manifests", []ManifestInfo{{Length: 1}, {Length: 1}, {Length: 1}, {Length: 1}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(day)
			st.Manifests = ManifestStats{Count: len(tt.files), Files: tt.files}
			tp := PlanTable(pol, st, testNow)
			if tt.after == 0 {
				if !tp.Empty() {
					t.Fatalf("unexpected %v", actionTypes(tp))
				}
				return
			}
			a := findAction(t, tp, RewriteManifests)
			if a.Manifests.EstimatedManifestsAfter != tt.after {
				t.Fatalf("after = %d, want %d", a.Manifests.EstimatedManifestsAfter, tt.after)
			}
		})
	}
}
