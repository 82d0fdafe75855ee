package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iceops/iceops/diff"
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
		StuckRuns: []diff.InspectStuckRun{{RunID: "20200101T000000Z", Reason: "manifest unreadable: EOF"}, {Reason: "list .iceops-quarantine: denied"}}}}
	var buf bytes.Buffer
	if err := Inspect(&buf, in, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  stuck quarantine     20200101T000000Z: manifest unreadable: EOF\n",
		"  stuck quarantine     (all): list .iceops-quarantine: denied\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in:\n%s", want, buf.String())
		}
	}
}
