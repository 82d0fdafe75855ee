package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

var update = flag.Bool("update", false, "rewrite testdata/plan-2.2.json")

// everyKindPlan has one action of every kind, so the round trip covers
// every payload.
func everyKindPlan(t *testing.T) *diff.Plan {
	t.Helper()
	p := samplePlan(t)
	tp := &p.Tables[0]
	tp.Actions = []diff.Action{
		tp.Actions[0],
		{Type: diff.ReplaceSortOrder, Reason: "sort_order (main.icewright.hcl:4)", SortOrder: &diff.SortOrderChange{Before: []string{}, After: []string{"ts DESC NULLS LAST"},
			Fields: []diff.SortField{{Transform: "identity", Column: "ts", Descending: true}}}},
		{Type: diff.RemoveDanglingDeletes, Reason: "dangling_deletes (main.icewright.hcl:9): 2 position delete files apply to no live data file",
			DanglingDeletes: &diff.DanglingDeletes{DeleteFiles: 2, DeleteBytes: 2048, PositionDeletes: 2, ManifestsDropped: 1, SpecIDs: []int{0}}},
		{Type: diff.AgePartitions, Reason: "partition_ageing (main.icewright.hcl:11): day partitions of ts whose month ended 90d ago or more, into 1 month partitions of new spec 1, not the default",
			PartitionAgeing: &diff.PartitionAgeing{After: "90d", AfterMs: 7776000000, From: "day", To: "month", Column: "ts", Field: "ts_day", CutoffMs: 1711065600000,
				TargetSpecID: 1, AddsSpec: true, InputFiles: 2, InputBytes: 2048, Records: 20,
				Groups: []diff.AgeingGroup{{Partition: "ts_month=2024-01", Sources: []string{"ts_day=2024-01-01", "ts_day=2024-01-02"}, InputFiles: 2, InputBytes: 2048, Records: 20}}}},
		{Type: diff.Compact, Reason: "r", Compact: &diff.CompactAction{Strategy: "binpack", InputFiles: 3, InputBytes: 300, Partitions: 1, EstimatedOutputFiles: 1, TargetFileSize: 1 << 29,
			Groups: []diff.CompactGroup{{Partition: "day=1", InputFiles: 3, InputBytes: 300, EstimatedOutputFiles: 1,
				Files: []string{"/w/sales.db/orders/data/day=1/a.parquet", "/w/sales.db/orders/data/day=1/b.parquet", "/w/sales.db/orders/data/day=1/c.parquet"}}}, Commits: 1, Where: "day > 0"}},
		{Type: diff.RewriteManifests, Reason: "r", Manifests: &diff.ManifestsAction{ManifestsBefore: 9, EstimatedManifestsAfter: 1, TargetSize: 8 << 20}},
		tp.Actions[1],
		{Type: diff.RemoveOrphanFiles, Destructive: true, Reason: "r", Orphans: &diff.OrphansAction{Count: 1, Bytes: 10, Paths: []string{"/w/sales.db/orders/data/x.parquet"},
			OlderThan: "3d", OlderThanMs: 3 * 86400000, Quarantine: "7d",
			PurgeRuns: []diff.PurgeRun{{RunID: "20261101T000000Z", Files: 2, Bytes: 20, CreatedAtMs: 1, PurgeAfterMs: 2, ManifestDigest: "sha256:ab"}}}},
	}
	tp.Refusals = []diff.Refusal{{Action: "compact", Reason: "row lineage"}}
	// Format 2.1: estimates and the table's prices.
	tp.Actions[4].Estimate = &diff.Usage{Requests: diff.Requests{Get: 12, Put: 5}, BytesRead: 20300, BytesWritten: 290, FilesRead: 6, FilesWritten: 5,
		BytesFreed: 10, ScanOpensSaved: 2, CPUSeconds: 0.5, PeakMemoryBytes: 36 << 20}
	tp.Actions[7].Estimate = &diff.Usage{Requests: diff.Requests{List: 1, Get: 4, Head: 1, Put: 2, BatchDelete: 2}, FilesWritten: 2, FilesDeleted: 2, BytesFreed: 20}
	tp.Pricing = &config.Prices{Storage: "s3", StorageGBMonth: 0.023, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.0504, ScansPerMonth: 30, Read: "2026-12-07"}
	// Format 2.2: what reading the table's references costs.
	tp.References = &diff.ReferenceReads{MetadataBytes: 900, ManifestReads: diff.ManifestReads{Lists: 3, ListBytes: 300, Manifests: 4, ManifestBytes: 1600}}
	return seal(t, p)
}

// readTestdata reads the saved plan testdata/name with Read, which checks
// its checksum and validates it.
func readTestdata(t *testing.T, name string) *diff.Plan {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Read(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A plan saved in format 2.0 (testdata/plan-2.0.json, as an icewright of
// that format wrote it) still reads, its checksum intact.
func TestReadsFormat20(t *testing.T) {
	p := readTestdata(t, "plan-2.0.json")
	if p.FormatVersion != "2.0" || len(p.Tables[0].Actions) != 8 || p.Tables[0].Actions[4].Estimate != nil {
		t.Errorf("read %s with %d actions", p.FormatVersion, len(p.Tables[0].Actions))
	}
}

// TestRoundTrip: Write, Read and Write again give the same bytes and the
// same plan, for every action kind; the bytes are the checked-in document
// of format 2.2, so a change of the on-disk format fails here (plans saved
// by an earlier build must still read).
func TestRoundTrip(t *testing.T) {
	p := everyKindPlan(t)
	var first bytes.Buffer
	if err := Write(&first, p); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "plan-2.2.json")
	if *update {
		if err := os.WriteFile(golden, first.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), want) {
		t.Fatalf("the plan document changed from %s:\n%s", golden, first.String())
	}
	q, err := Read(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("read back another plan:\n%+v\n%+v", p, q)
	}
	var second bytes.Buffer
	if err := Write(&second, q); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("a plan read back writes other bytes")
	}
	var doc map[string]any
	if err := json.Unmarshal(want, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format_version", "icewright_version", "created_at", "config_digest", "tables", "summary", "checksum"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	if !strings.HasSuffix(first.String(), "}\n") {
		t.Error("the document does not end with one newline")
	}
}

// TestSaveLoad: Save writes mode 0600 atomically and Load reads it back;
// a missing file is a read error, a damaged one ErrInvalid, and a failed
// Save leaves no file behind.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tonight.plan")
	p := everyKindPlan(t)
	if err := Save(path, p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Checksum != p.Checksum || len(q.Tables[0].Actions) != len(diff.Kinds()) {
		t.Errorf("loaded %+v", q.Tables[0])
	}
	if _, err := Load(filepath.Join(dir, "nowhere.plan")); err == nil || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "read saved plan") {
		t.Errorf("missing file: %v", err)
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrInvalid) {
		t.Errorf("truncated file: %v", err)
	}
	bad := *p
	bad.Tables = []diff.TablePlan{{Actions: []diff.Action{{Type: "drop_table"}}}}
	if err := Save(filepath.Join(dir, "bad.plan"), &bad); err == nil {
		t.Fatal("saved a plan with an unknown action")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 {
		t.Errorf("files left: %v", left)
	}
}

// TestReadsFormat21: a plan saved in format 2.1 (before the run's read of
// other tables' references, 2.2) still reads and validates: its tables
// have no references, and its summary has none of the run's read.
func TestReadsFormat21(t *testing.T) {
	p := readTestdata(t, "plan-2.1.json")
	if p.FormatVersion != "2.1" || p.Summary.OtherTablesRead != 0 || p.Summary.Estimate == (diff.Usage{}) {
		t.Errorf("read %s, summary %+v", p.FormatVersion, p.Summary)
	}
	for _, tp := range p.Tables {
		if tp.References != nil {
			t.Errorf("%s: references %+v in a 2.1 plan", tp.Address, tp.References)
		}
	}
}
