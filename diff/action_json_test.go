package diff

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func samplePlan() Plan {
	cur := int64(3)
	return Plan{
		FormatVersion:    FormatVersion,
		IcewrightVersion: "0.1.0",
		CreatedAt:        time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		ConfigDigest:     "sha256:abc",
		Tables: []TablePlan{{
			Address:  "lake.analytics.clicks",
			Policy:   "events",
			Observed: Observed{TableUUID: "u", MetadataLocation: "s3://b/m.json", CurrentSnapshotID: &cur, DataFiles: 1203, DataBytes: 3328599345, Snapshots: 220},
			Actions: []Action{
				{Type: UpdateProperties, Reason: "r1", Properties: &PropertiesChange{Set: map[string]string{"k": "new"}, Before: map[string]string{"k": "old"}, Remove: []string{"gone"}}},
				{Type: ReplaceSortOrder, Reason: "r2", SortOrder: &SortOrderChange{Before: []string{}, After: []string{"a ASC NULLS FIRST"}, Fields: []SortField{{Transform: "identity", Column: "a", NullsFirst: true}}}},
				{Type: Compact, Reason: "r3", Compact: &CompactAction{Strategy: "sort", InputFiles: 1203, InputBytes: 3328599345, Partitions: 4, EstimatedOutputFiles: 7, TargetFileSize: 512 << 20,
					Groups: []CompactGroup{{SpecID: 1, Partition: "d=1", InputFiles: 1203, InputBytes: 3328599345, EstimatedOutputFiles: 7}}, SortOrder: []string{"a ASC NULLS FIRST"}, Commits: 1, SkippedGroups: 2, SkippedBytes: 10}},
				{Type: RewriteManifests, Reason: "r4", Manifests: &ManifestsAction{ManifestsBefore: 240, EstimatedManifestsAfter: 4, TargetSize: 8 << 20}},
				{Type: ExpireSnapshots, Destructive: true, Reason: "r5", Expire: &ExpireAction{SnapshotIDs: []int64{1, 2}, MaxAge: "2d", MaxAgeMs: 172800000, MinSnapshots: 3, OldestTimestampMs: 9,
					Kept: 3, ProtectedByRef: map[string]int{`tag "q3"`: 1}, RefsToRemove: []string{"old"}, SnapshotsAddedByPlan: 2, FilesToDelete: 900, BytesToDelete: 123}},
				{Type: RemoveOrphanFiles, Destructive: true, Reason: "r6", Orphans: &OrphansAction{Count: 1, Bytes: 47, Paths: []string{"s3://b/x"}, OlderThan: "3d", OlderThanMs: 259200000,
					KeptByAgeGuard: 3, KeptBytes: 5, Excluded: 2, NonIceberg: 1, NonIcebergPaths: []string{"s3://b/_SUCCESS"}, Ratio: 0.1, MaxRatio: 0.25, Quarantine: "7d"}},
			},
			Refusals: []Refusal{{Action: "remove_orphan_files", Reason: "x"}},
			Warnings: []Warning{{Code: "gc_disabled", Message: "m", Origin: "main.icewright.hcl:1"}},
		}},
		Errors: []TableError{{Address: "lake.x.y", Message: "boom"}},
	}
}

func TestPlanJSONRoundTrip(t *testing.T) {
	p := samplePlan()
	Summarize(&p)
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(p, back) {
		t.Fatalf("round trip changed the plan:\n got %+v\nwant %+v", back, p)
	}
}

// The action objects are flat, with docs/design.md §5.2's keys beside type.
func TestActionJSONIsFlat(t *testing.T) {
	p := samplePlan()
	wantKeys := map[ActionType][]string{
		UpdateProperties:  {"type", "destructive", "reason", "set", "before", "remove"},
		ReplaceSortOrder:  {"type", "destructive", "before", "after", "fields"},
		Compact:           {"type", "destructive", "strategy", "input_files", "input_bytes", "partitions", "estimated_output_files"},
		RewriteManifests:  {"type", "destructive", "manifests_before", "estimated_manifests_after"},
		ExpireSnapshots:   {"type", "destructive", "snapshot_ids", "files_to_delete", "bytes_to_delete", "refs_to_remove", "protected_by_ref"},
		RemoveOrphanFiles: {"type", "destructive", "count", "bytes", "paths", "kept_by_age_guard"},
	}
	for _, a := range p.Tables[0].Actions {
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		for _, k := range wantKeys[a.Type] {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s JSON lacks %q: %s", a.Type, k, data)
			}
		}
		if obj["type"] != string(a.Type) {
			t.Errorf("type = %v", obj["type"])
		}
	}
	// The document's shape for one action, compared as values.
	data, _ := json.Marshal(p.Tables[0].Actions[3])
	var got, want map[string]any
	_ = json.Unmarshal(data, &got)
	_ = json.Unmarshal([]byte(`{"type":"rewrite_manifests","destructive":false,"reason":"r4","manifests_before":240,"estimated_manifests_after":4,"target_size":8388608}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rewrite_manifests JSON = %s", data)
	}
}

func TestActionJSONErrors(t *testing.T) {
	var a Action
	if err := json.Unmarshal([]byte(`{"type":"drop_table","destructive":true}`), &a); err == nil || !strings.Contains(err.Error(), "drop_table") {
		t.Fatalf("unknown type: err = %v", err)
	}
	if err := json.Unmarshal([]byte(`{"type":"compact","input_files":"many"}`), &a); err == nil {
		t.Fatal("bad payload accepted")
	}
	if _, err := json.Marshal(Action{Type: "nope"}); err == nil {
		t.Fatal("marshalled an unknown type")
	}
	// An action whose payload is missing still marshals its header.
	data, err := json.Marshal(Action{Type: Compact, Reason: "r"})
	if err != nil || string(data) != `{"type":"compact","destructive":false,"reason":"r"}` {
		t.Fatalf("nil payload: %s %v", data, err)
	}
}

func TestSummarize(t *testing.T) {
	p := Plan{
		Tables: []TablePlan{
			{Address: "a", Actions: []Action{{Type: Compact}, {Type: ExpireSnapshots, Destructive: true}}},
			{Address: "b", Actions: []Action{}},
			{Address: "c", Actions: []Action{}, Warnings: []Warning{{Code: "w"}}},
			{Address: "d", Actions: []Action{}, Refusals: []Refusal{{Action: "remove_orphan_files"}}},
		},
		Errors: []TableError{{Address: "e"}},
	}
	Summarize(&p)
	want := Summary{Tables: 5, TablesChanged: 1, TablesInPolicy: 2, Actions: 2, DestructiveActions: 1, Errors: 2}
	if p.Summary != want {
		t.Fatalf("summary = %+v, want %+v", p.Summary, want)
	}
}

// TestSummarizeEstimates: each table's estimate and the summary's are the
// sums of the actions' (Estimated); an action without one is left out and
// counted apart; a table without any has none.
func TestSummarizeEstimates(t *testing.T) {
	p := Plan{Tables: []TablePlan{
		{Address: "a", Actions: []Action{
			{Type: Compact, Estimate: &Usage{Requests: Requests{Get: 10, Put: 2}, BytesRead: 100, BytesWritten: 90, BytesFreed: 100, CPUSeconds: 0.1, PeakMemoryBytes: 64}},
			{Type: ExpireSnapshots, Destructive: true, Estimate: &Usage{Requests: Requests{Get: 3, BatchDelete: 1}, BytesFreed: 500, FilesDeleted: 4, CPUSeconds: 0.2}},
			{Type: UpdateProperties},
		}},
		{Address: "b", Actions: []Action{{Type: RewriteManifests, Estimate: &Usage{Requests: Requests{Get: 5, Put: 1}, ScanOpensSaved: 4, CPUSeconds: 0.05, PeakMemoryBytes: 128}}}},
		{Address: "c", Actions: []Action{{Type: Compact}}},
	}}
	Summarize(&p)
	var a Usage
	a.Add(*p.Tables[0].Actions[0].Estimate)
	a.Add(*p.Tables[0].Actions[1].Estimate)
	if got := p.Tables[0].Estimate; got == nil || *got != a {
		t.Errorf("table a: %+v, want %+v", got, a)
	}
	if p.Tables[2].Estimate != nil {
		t.Errorf("table c has no estimate, got %+v", p.Tables[2].Estimate)
	}
	all := a
	all.Add(*p.Tables[1].Actions[0].Estimate)
	if p.Summary.Estimate != all || p.Summary.EstimatedActions != 3 || p.Summary.Actions != 5 {
		t.Errorf("summary %+v, want estimate %+v over 3 of 5 actions", p.Summary, all)
	}
	// Without estimates (a 2.0 plan) the JSON summary is as before.
	q := Plan{Tables: []TablePlan{{Address: "a", Actions: []Action{{Type: Compact}}}}}
	Summarize(&q)
	b, err := json.Marshal(q.Summary)
	if err != nil || strings.Contains(string(b), "estimate") {
		t.Errorf("summary without estimates: %s %v", b, err)
	}
}
