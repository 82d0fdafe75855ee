package planfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

func samplePlan(t *testing.T) *diff.Plan {
	t.Helper()
	cur := int64(42)
	p := &diff.Plan{
		FormatVersion:    diff.FormatVersion,
		IcewrightVersion: "0.1.0",
		CreatedAt:        time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		ConfigDigest:     "sha256:abc",
		Tables: []diff.TablePlan{{
			Address: "lake.sales.orders",
			Observed: diff.Observed{TableUUID: "9f7c0000-0000-4000-8000-000000000001",
				MetadataLocation: "/w/sales.db/orders/metadata/00003-x.metadata.json", CurrentSnapshotID: &cur},
			Actions: []diff.Action{
				{Type: diff.UpdateProperties, Reason: "r", Properties: &diff.PropertiesChange{Set: map[string]string{"k": "v"}, Before: map[string]string{}}},
				{Type: diff.ExpireSnapshots, Destructive: true, Reason: "r", Expire: &diff.ExpireAction{SnapshotIDs: []int64{1, 2}, MaxAge: "2d", MaxAgeMs: 172800000}},
				{Type: diff.RemoveOrphanFiles, Destructive: true, Reason: "r", Orphans: &diff.OrphansAction{Count: 1, Paths: []string{"/w/sales.db/orders/data/x.parquet"}, OlderThan: "3d", OlderThanMs: 3 * 86400000}},
			},
		}, {
			Address:  "lake.sales.returns",
			Observed: diff.Observed{TableUUID: "9f7c0000-0000-4000-8000-000000000002", MetadataLocation: "/w/r/metadata/1.metadata.json"},
			Actions:  []diff.Action{},
		}},
		Errors: []diff.TableError{},
	}
	return seal(t, p)
}

// seal gives p the summary and checksum icewright plan gives a plan.
func seal(t *testing.T, p *diff.Plan) *diff.Plan {
	t.Helper()
	diff.Summarize(p)
	sum, err := Checksum(p)
	if err != nil {
		t.Fatal(err)
	}
	p.Checksum = sum
	return p
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit decodes the document generically, lets fn change it, and encodes it.
func edit(t *testing.T, doc []byte, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	return encode(t, m)
}

func firstTableActions(m map[string]any) []any {
	return m["tables"].([]any)[0].(map[string]any)["actions"].([]any)
}

func TestReadAcceptsOwnPlan(t *testing.T) {
	p := samplePlan(t)
	got, err := Read(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Tables[0].Actions[1].Expire.SnapshotIDs[1] != 2 || got.Checksum != p.Checksum {
		t.Fatalf("decoded %+v", got.Tables[0].Actions[1])
	}
	// Compact form too.
	b, _ := json.Marshal(p)
	if _, err := Read(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}

// A plan of format 2.0 (before estimates and prices) still reads: 2.1 only
// adds fields.
func TestReadAccepts20(t *testing.T) {
	p := samplePlan(t)
	p.FormatVersion = "2.0"
	p = seal(t, p)
	doc := encode(t, p)
	if bytes.Contains(doc, []byte(`"estimate"`)) || bytes.Contains(doc, []byte(`"pricing"`)) {
		t.Fatalf("the sample has 2.1 fields: %s", doc)
	}
	got, err := Read(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got.FormatVersion != "2.0" || len(got.Tables[0].Actions) != 3 {
		t.Fatalf("decoded %+v", got)
	}
}

// Estimates and prices survive a saved plan (format 2.1).
func TestReadKeepsEstimates(t *testing.T) {
	p := samplePlan(t)
	p.Tables[0].Actions[1].Estimate = &diff.Usage{Requests: diff.Requests{Get: 3, BatchDelete: 1}, FilesDeleted: 10, BytesFreed: 1000}
	p.Tables[0].Pricing = &config.Prices{Storage: "s3", StorageGBMonth: 0.023, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.05, ScansPerMonth: 30, Read: "2026-12-07"}
	p = seal(t, p)
	got, err := Read(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Tables[0].Actions[1].Estimate; e == nil || *e != *p.Tables[0].Actions[1].Estimate {
		t.Errorf("estimate %+v", e)
	}
	if got.Tables[0].Pricing == nil || *got.Tables[0].Pricing != *p.Tables[0].Pricing {
		t.Errorf("pricing %+v", got.Tables[0].Pricing)
	}
	if got.Summary.Estimate.BytesFreed != 1000 || got.Summary.PricedTables != 1 {
		t.Errorf("summary %+v", got.Summary)
	}
}

func TestReadRefuses(t *testing.T) {
	good := encode(t, samplePlan(t))
	cases := []struct {
		name string
		doc  []byte
		want string
	}{
		{"empty", []byte("  \n"), "empty"},
		{"truncated", good[:len(good)*2/3], "truncated"},
		{"truncated at a value boundary", good[:bytes.LastIndex(good, []byte("}"))], "truncated"},
		{"not json", []byte("plan: yes"), "truncated"},
		{"other major version", edit(t, good, func(m map[string]any) { m["format_version"] = "3.0" }), "not supported"},
		{"a 1.x plan", edit(t, good, func(m map[string]any) { m["format_version"] = "1.1" }), "format_version 1.1 was written by an older icewright, whose compaction groups do not name their files"},
		{"no version", edit(t, good, func(m map[string]any) { delete(m, "format_version") }), "format_version"},
		{"added snapshot id", edit(t, good, func(m map[string]any) {
			e := firstTableActions(m)[1].(map[string]any)
			e["snapshot_ids"] = append(e["snapshot_ids"].([]any), json.Number("3"))
		}), "checksum"},
		{"added orphan path", edit(t, good, func(m map[string]any) {
			o := firstTableActions(m)[2].(map[string]any)
			o["paths"] = append(o["paths"].([]any), "/w/sales.db/orders/data/live.parquet")
			o["count"] = json.Number("2")
		}), "checksum"},
		{"count disagrees with paths", edit(t, good, func(m map[string]any) {
			firstTableActions(m)[2].(map[string]any)["count"] = json.Number("5")
		}), "count 5"},
		{"destructive flag cleared", edit(t, good, func(m map[string]any) {
			firstTableActions(m)[1].(map[string]any)["destructive"] = false
		}), "destructive"},
		{"unknown action field", edit(t, good, func(m map[string]any) {
			firstTableActions(m)[1].(map[string]any)["force"] = true
		}), "unknown field"},
		{"unknown top-level field", edit(t, good, func(m map[string]any) { m["approved_by"] = "me" }), "unknown field"},
		{"unknown action type", edit(t, good, func(m map[string]any) {
			firstTableActions(m)[0].(map[string]any)["type"] = "drop_table"
		}), "unknown type"},
		{"actions out of order", edit(t, good, func(m map[string]any) {
			a := firstTableActions(m)
			a[1], a[2] = a[2], a[1]
		}), "order"},
		{"summary edited", edit(t, good, func(m map[string]any) {
			m["summary"].(map[string]any)["destructive_actions"] = json.Number("0")
		}), "summary"},
		{"checksum removed", edit(t, good, func(m map[string]any) { delete(m, "checksum") }), "checksum"},
		{"missing uuid", edit(t, good, func(m map[string]any) {
			m["tables"].([]any)[0].(map[string]any)["observed"].(map[string]any)["table_uuid"] = ""
		}), "table_uuid"},
		{"trailing data", append(append([]byte{}, good...), []byte(`{"x":1}`)...), "truncated"},
		{"orphan age below floor", edit(t, good, func(m map[string]any) {
			firstTableActions(m)[2].(map[string]any)["older_than_ms"] = json.Number("3600000")
		}), "24h"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(c.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// wholeDocChecksum is how Checksum used to hash: the whole document,
// normalised by a JSON round trip, marshalled at once. Checksum now
// streams table by table and must give the same value, so plans saved
// before the change still verify.
func wholeDocChecksum(t *testing.T, p *diff.Plan) string {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q diff.Plan
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatal(err)
	}
	doc := struct {
		FormatVersion string           `json:"format_version"`
		ConfigDigest  string           `json:"config_digest"`
		Targets       []string         `json:"targets"`
		Tables        []diff.TablePlan `json:"tables"`
	}{q.FormatVersion, q.ConfigDigest, q.Targets, q.Tables}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestChecksumStreamsTheSameBytes(t *testing.T) {
	full := samplePlan(t)
	one := samplePlan(t)
	one.Tables = one.Tables[:1]
	none := samplePlan(t)
	none.Tables = []diff.TablePlan{}
	nilTables := samplePlan(t)
	nilTables.Tables, nilTables.Targets = nil, []string{"lake.*"}
	odd := samplePlan(t)
	o := *odd.Tables[0].Actions[2].Orphans
	o.Paths = []string{"/w/a \"quoted\".parquet", "/w/<b>&c.parquet", "/w/é/ü.parquet", "/w/bad-\xff-utf8.parquet", "/w/tab\there", "/w/\u2028sep"}
	for i := range 1000 {
		o.Paths = append(o.Paths, fmt.Sprintf("/w/data/%05d.parquet", i))
	}
	odd.Tables[0].Actions[2].Orphans = &o
	odd.Tables[0].Actions[0].Properties = &diff.PropertiesChange{Set: map[string]string{"k": "bad-\xfe-value"}, Before: map[string]string{}}
	two := samplePlan(t) // orphan paths in two tables
	two.Tables[1].Actions = append(two.Tables[1].Actions, two.Tables[0].Actions[2])
	for name, p := range map[string]*diff.Plan{"full": full, "one": one, "none": none, "nil": nilTables, "odd": odd, "two": two} {
		got, err := Checksum(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := wholeDocChecksum(t, p); got != want {
			t.Errorf("%s: streamed %s, whole document %s", name, got, want)
		}
	}
}

// TestValidatePurgeRuns: a remove_orphan_files action may carry only
// purge runs; a run id that is a path, a repeated run, or a run without a
// manifest digest make the plan invalid.
func TestValidatePurgeRuns(t *testing.T) {
	mk := func(runs ...diff.PurgeRun) *diff.Plan {
		p := &diff.Plan{FormatVersion: diff.FormatVersion, CreatedAt: time.Now(), ConfigDigest: "sha256:x",
			Tables: []diff.TablePlan{{Address: "lake.s.t", Observed: diff.Observed{TableUUID: "u", MetadataLocation: "m"},
				Actions: []diff.Action{{Type: diff.RemoveOrphanFiles, Destructive: true, Orphans: &diff.OrphansAction{
					Paths: []string{}, OlderThanMs: (72 * time.Hour).Milliseconds(), PurgeRuns: runs}}}}}}
		diff.Summarize(p)
		return p
	}
	ok := diff.PurgeRun{RunID: "20261101T000000Z", ManifestDigest: "sha256:ab"}
	if err := Validate(mk(ok)); err != nil {
		t.Fatalf("a purge-only action refused: %v", err)
	}
	for name, runs := range map[string][]diff.PurgeRun{
		"none":      nil,
		"path":      {{RunID: "../../data", ManifestDigest: "sha256:ab"}},
		"dotdot":    {{RunID: "..", ManifestDigest: "sha256:ab"}},
		"twice":     {ok, ok},
		"no digest": {{RunID: "r"}},
	} {
		if err := Validate(mk(runs...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
