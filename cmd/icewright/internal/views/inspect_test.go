package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
)

func TestInspectEmptyTable(t *testing.T) {
	in := &diff.Inspection{
		Address:    "lake.a.empty",
		Specs:      []diff.PartitionSpec{{ID: 0}},
		Properties: map[string]string{"owner": "team-a", "s3.secret-access-key": "hunter2"},
	}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"# not managed by this configuration",
		"current snapshot     none (empty table)",
		"partition specs      0: unpartitioned",
		"files                0 (0 B, 0 rows)",
		"snapshots            0",
		"estimate             not computed",
		`"s3.secret-access-key" = (sensitive)`,
		"none: the table looks healthy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Error("secret printed")
	}
	buf.Reset()
	if err := InspectJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Error("secret in JSON")
	}
	if in.Properties["s3.secret-access-key"] != "hunter2" {
		t.Error("masking changed the caller's inspection")
	}
	buf.Reset()
	if err := InspectJSONList(&buf, []*diff.Inspection{in, in}); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &list); err != nil || len(list) != 2 {
		t.Fatalf("list: %v, %d documents", err, len(list))
	}
	if strings.Contains(buf.String(), "hunter2") || in.Properties["s3.secret-access-key"] != "hunter2" {
		t.Error("secret in the JSON list, or the caller's inspection changed")
	}
}

func TestInspectOrphanError(t *testing.T) {
	in := &diff.Inspection{Address: "lake.a.b", Managed: true, OrphanError: "listing refused: prefix mismatch"}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "not available: listing refused: prefix mismatch") {
		t.Errorf("orphan error not shown:\n%s", buf.String())
	}
}

// TestInspectStuckQuarantine: each stuck quarantine run is a line with its
// reason; a quarantine that could not be listed at all has no run id.
func TestInspectStuckQuarantine(t *testing.T) {
	in := &diff.Inspection{Address: "lake.a.b", Managed: true, Orphans: &diff.InspectOrphans{OlderThan: "3d",
		StuckRuns: []diff.InspectStuckRun{{RunID: "20200101T000000Z", Reason: "manifest unreadable: EOF"}, {Reason: "list .icewright-quarantine: denied"}}}}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  stuck quarantine     20200101T000000Z: manifest unreadable: EOF\n",
		"  stuck quarantine     (all): list .icewright-quarantine: denied\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in:\n%s", want, buf.String())
		}
	}
}

// The schema indents nested fields; the histogram draws each bucket, folds
// a run of empty ones into one line and marks the target's bucket; every
// quarantine run is listed.
func TestInspectSchemaHistogramQuarantine(t *testing.T) {
	in := &diff.Inspection{
		Address: "lake.a.b", TargetFileSize: 128 << 20,
		Schema: diff.InspectSchema{ID: 1, Fields: []diff.SchemaColumn{
			{ID: 1, Name: "id", Type: "long", Required: true},
			{ID: 2, Name: "payload", Type: "struct"},
			{ID: 3, Name: "kind", Type: "string", Depth: 1},
		}},
		SizeHistogram: []diff.SizeBucket{
			{MinBytes: 32 << 20, MaxBytes: 64 << 20, Files: 10},
			{MinBytes: 64 << 20, MaxBytes: 128 << 20, Files: 5},
			{MinBytes: 128 << 20, MaxBytes: 256 << 20},
		},
		PartitionHistograms: []diff.PartitionHistogram{{Partition: "day=2026-01-01", Buckets: []diff.SizeBucket{
			{MinBytes: 1 << 10, MaxBytes: 2 << 10, Files: 1},
			{MinBytes: 2 << 10, MaxBytes: 4 << 10},
			{MinBytes: 4 << 10, MaxBytes: 8 << 10},
			{MinBytes: 8 << 10, MaxBytes: 16 << 10},
			{MinBytes: 16 << 10, MaxBytes: 32 << 10, Files: 2},
			{MinBytes: 128 << 20, MaxBytes: 256 << 20},
		}}},
		Orphans: &diff.InspectOrphans{OlderThan: "3d", QuarantineRuns: []diff.InspectQuarantineRun{
			{RunID: "20260101T000000Z", Files: 2, Bytes: 2048, CreatedAtMs: 1767225600000, PurgeAfterMs: 1767830400000},
		}},
	}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Schema (id 1)\n     1  id       long         required\n     2  payload  struct       optional\n     3    kind   string       optional\n",
		"    32 MiB - 64 MiB    ######################################## 10\n" +
			"    64 MiB - 128 MiB   ####################                     5\n" +
			"    128 MiB - 256 MiB                                           0  <- target 128.0 MiB\n",
		"  file sizes of day=2026-01-01 (spec 0)\n" +
			"    1 KiB - 2 KiB      ####################                     1\n" +
			"    2 KiB - 16 KiB                                              0\n" +
			"    16 KiB - 32 KiB    ######################################## 2\n",
		"  quarantine run       20260101T000000Z: 2 files (2.0 KiB), created 2026-01-01 00:00 UTC, purge after 2026-01-08 00:00 UTC\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing\n%s\nin:\n%s", want, out)
		}
	}
}

// TestInspectWaste: the Waste section says what the table pays for today
// and no reader needs, with a month's money when it has prices.
func TestInspectWaste(t *testing.T) {
	orphans, orphanBytes := 3, int64(4096)
	usd := 1.234
	in := &diff.Inspection{
		Address: "lake.a.t", Specs: []diff.PartitionSpec{{ID: 0}}, SmallFileLimit: 96 << 20,
		Orphans: &diff.InspectOrphans{OlderThan: "3d"},
		Waste: diff.InspectWaste{ExpirableSnapshots: 12, ExpirableFiles: 40, ExpirableBytes: 5 << 30,
			OrphanFiles: &orphans, OrphanBytes: &orphanBytes, SmallFiles: 14, SmallBytes: 3 << 20, ExtraScanOpens: 11, USDPerMonth: &usd},
	}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := "\nWaste\n" +
		"  past retention       40 files only 12 snapshots past retention hold (5.0 GiB)\n" +
		"  orphan files         3 files (4.0 KiB) older than 3d\n" +
		"  small files          14 files (3.0 MiB) below 96.0 MiB: 11 extra opens a full scan\n" +
		"  costs                $1.23 a month (storage and the scans' requests; docs/cost.md)\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("missing\n%s\nin\n%s", want, buf.String())
	}
	in.Waste.USDPerMonth, in.Waste.OrphanFiles, in.Waste.OrphanBytes, in.Orphans, in.OrphanError = nil, nil, nil, nil, "list: access denied"
	buf.Reset()
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  orphan files         not counted: the storage could not be listed (see Orphan files); inspect again once it can\n",
		"  costs                no prices for this storage: quantities only\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
}
