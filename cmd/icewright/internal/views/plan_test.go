package views

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
)

func designPlan() *diff.Plan {
	snap := int64(123)
	return &diff.Plan{
		FormatVersion:    diff.FormatVersion,
		IcewrightVersion: "0.1.0",
		CreatedAt:        time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		ConfigDigest:     "sha256:abc",
		Tables: []diff.TablePlan{
			{
				Address:  "lake.analytics.clicks",
				Observed: diff.Observed{TableUUID: "u", CurrentSnapshotID: &snap, DataFiles: 1203, DataBytes: 3328599345, Snapshots: 220},
				Actions: []diff.Action{
					{Type: diff.UpdateProperties, Reason: `snapshot_retention.max_age = "2d" (main.icewright.hcl:12); properties["s3.secret-access-key"] = "hunter2" (main.icewright.hcl:20)`, Properties: &diff.PropertiesChange{
						Set: map[string]string{
							"history.expire.max-snapshot-age-ms": "172800000",
							"write.target-file-size-bytes":       "536870912",
							"s3.secret-access-key":               "hunter2",
						},
						Before: map[string]string{"history.expire.max-snapshot-age-ms": "432000000", "s3.secret-access-key": "old"},
					}},
					{Type: diff.ReplaceSortOrder, SortOrder: &diff.SortOrderChange{Before: []string{}, After: []string{"event_ts DESC NULLS LAST", "bucket(16, user_id)"}}},
					{Type: diff.Compact, Compact: &diff.CompactAction{Strategy: "sort", InputFiles: 1203, InputBytes: 3328599345, Partitions: 4, EstimatedOutputFiles: 7}},
					{Type: diff.RewriteManifests, Manifests: &diff.ManifestsAction{ManifestsBefore: 240, EstimatedManifestsAfter: 4}},
					{Type: diff.ExpireSnapshots, Destructive: true, Expire: &diff.ExpireAction{
						SnapshotIDs: make([]int64, 214), MaxAge: "2d", OldestTimestampMs: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixMilli() - (41*86400000 + 3600000), Kept: 3,
						ProtectedByRef: map[string]int{`tag "q3-close"`: 1},
					}},
					{Type: diff.RemoveOrphanFiles, Destructive: true, Orphans: &diff.OrphansAction{Count: 12, Bytes: 47395635, OlderThan: "3d", KeptByAgeGuard: 3, Excluded: 2, NonIceberg: 1, Ratio: 0.012, MaxRatio: 0.25}},
				},
			},
			{Address: "lake.analytics.views"},
			{Address: "lake.analytics.sessions"},
			{Address: "lake.analytics.users"},
		},
	}
}

func TestPlanHumanMatchesDesign(t *testing.T) {
	var buf bytes.Buffer
	if err := Plan(&buf, designPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `icewright will perform the following actions:

  # lake.analytics.clicks
  ~ table "lake.analytics.clicks" {
      ~ property "history.expire.max-snapshot-age-ms" = "432000000" -> "172800000"
      ~ property "s3.secret-access-key"               = (sensitive) -> (sensitive)
      + property "write.target-file-size-bytes"       = "536870912"
      # snapshot_retention.max_age = "2d" (main.icewright.hcl:12)
      # properties["s3.secret-access-key"] = (sensitive) (main.icewright.hcl:20)
      ~ sort_order = [] -> ["event_ts DESC NULLS LAST", "bucket(16, user_id)"]
      » compact 1,203 files (3.1 GiB) in 4 partitions into ~7 files (sort)
      » rewrite 240 manifests into ~4
      # 240 manifests counted before the compaction above; apply rewrites those left after it
      - expire 214 snapshots older than 2d (oldest 41d); 3 kept (1 by tag "q3-close")
      - remove 12 orphan files (45.2 MiB) older than 3d; 3 newer files kept by the age guard; 2 excluded; 1 non-Iceberg file reported only; 1.2% unreferenced (max 25%)
    }

Plan: 1 table to change (6 actions, 2 destructive), 3 tables in policy.
`
	if got := buf.String(); got != want {
		t.Errorf("plan text mismatch\n--- got\n%s--- want\n%s", got, want)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Error("secret value printed")
	}
}

func TestPlanNoChanges(t *testing.T) {
	p := &diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.c"}, {Address: "a.b.d"}}}
	var buf bytes.Buffer
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "No changes. All 2 tables are in policy.\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPlanErrorsAndRefusals(t *testing.T) {
	p := &diff.Plan{
		Tables: []diff.TablePlan{{
			Address:  "a.b.c",
			Refusals: []diff.Refusal{{Action: "remove_orphan_files", Reason: "gc.enabled is false"}},
			Warnings: []diff.Warning{{Code: "IW107", Message: "older_than is shorter than the longest commit gap", Origin: "main.icewright.hcl:9"}},
		}},
		Errors: []diff.TableError{{Address: "a.b.x", Message: "read manifest: no such file"}},
	}
	var buf bytes.Buffer
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `icewright will perform the following actions:

  # a.b.c
  ! table "a.b.c" {
      ! refused remove_orphan_files: gc.enabled is false
    }

Error: 1 table could not be planned; 1 table has refused actions.
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The errors and warnings are on stderr (PlanProblems), not in the plan.
	buf.Reset()
	if err := PlanProblems(&buf, p, NewStyles(false), false); err != nil {
		t.Fatal(err)
	}
	want = `Warnings:
  ! IW107 a.b.c: older_than is shorter than the longest commit gap (main.icewright.hcl:9)

Error: a.b.x: could not be planned: read manifest: no such file
Error: a.b.c: remove_orphan_files refused: gc.enabled is false
`
	if got := buf.String(); got != want {
		t.Errorf("problems: got\n%s\nwant\n%s", got, want)
	}
}

// TestPlanProblemsOnce: an error several addresses share (a catalog that
// could not be listed) is printed once, with what it blocked; a listing
// warning is printed with its origin and detail, a config warning is not
// (it was printed when the configuration was loaded).
func TestPlanProblemsOnce(t *testing.T) {
	msg := `catalog "pg" unreachable: connect: password authentication failed`
	p := &diff.Plan{
		Errors: []diff.TableError{{Address: "pg.a.*", Message: msg}, {Address: "pg.a.b", Message: msg}, {Address: "pg.a.c", Message: msg}},
		Warnings: []diff.Warning{
			{Code: "config", Message: "Snapshot retention below Trino's 7-day floor", Origin: "main.icewright.hcl:3"},
			{Code: diff.WarnCatalogEmpty, Message: `catalog "lake" lists no table`, Origin: "main.icewright.hcl:1", Detail: "Why."},
		},
	}
	var buf bytes.Buffer
	if err := PlanProblems(&buf, p, NewStyles(false), false); err != nil {
		t.Fatal(err)
	}
	want := `Warning: IW112: catalog "lake" lists no table (main.icewright.hcl:1)
  Why.

Error: catalog "pg" unreachable: connect: password authentication failed
  2 tables and 1 selector could not be planned: pg.a.*, pg.a.b, pg.a.c
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestSummaryCountsWhatHadErrors: a selector whose pattern could not be
// listed is not counted as a table, and a target matching nothing says so
// instead of claiming the configuration manages no table.
func TestSummaryCountsWhatHadErrors(t *testing.T) {
	styles := NewStyles(false)
	for _, tc := range []struct {
		p    *diff.Plan
		want string
	}{
		{&diff.Plan{Errors: []diff.TableError{{Address: "a.b.c"}, {Address: "a.x.*"}, {Address: "a.**"}}},
			"Error: 1 table and 2 selectors could not be planned."},
		{&diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.d"}}, Errors: []diff.TableError{{Address: "a.x.*"}}},
			"Error: 1 selector could not be planned. 1 table in policy."},
		{&diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.d", Actions: []diff.Action{{Type: diff.UpdateProperties}}}},
			Errors: []diff.TableError{{Address: "a.x.*"}, {Address: "a.b.e"}}},
			"Error: 1 table and 1 selector could not be planned. Plan: 1 table to change (1 action, 0 destructive), 0 tables in policy."},
		{&diff.Plan{Targets: []string{"a.nope.x"}}, `No changes. No managed table matches -target "a.nope.x".`},
		{&diff.Plan{}, "Error: no table is managed by this configuration."},
	} {
		diff.Summarize(tc.p)
		if got := Summary(tc.p, styles); got != tc.want {
			t.Errorf("Summary = %q, want %q", got, tc.want)
		}
	}
}

func TestPlanTargetsNoted(t *testing.T) {
	p := &diff.Plan{Targets: []string{"a.b.*"}, Tables: []diff.TablePlan{{Address: "a.b.c"}}}
	var buf bytes.Buffer
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `Targeted plan: only tables matching "a.b.*" were planned`) {
		t.Errorf("targets not noted:\n%s", buf.String())
	}
}

func TestPlanColour(t *testing.T) {
	var plain, coloured bytes.Buffer
	if err := Plan(&plain, designPlan(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if err := Plan(&coloured, designPlan(), NewStyles(true)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape codes with colour off")
	}
	if !strings.Contains(coloured.String(), "\x1b[31m-\x1b[0m expire") {
		t.Errorf("destructive action not red: %q", coloured.String())
	}
}

func TestSplitReasons(t *testing.T) {
	got := splitReasons(`a = "x; y" (f:1); b = 2 (default; block at f:9); c`)
	want := []string{`a = "x; y" (f:1)`, `b = 2 (default; block at f:9)`, `c`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFormatters(t *testing.T) {
	cases := []struct{ got, want string }{
		{Count(0), "0"}, {Count(999), "999"}, {Count(1203), "1,203"}, {Count(int64(1234567)), "1,234,567"}, {Count(-1203), "-1,203"},
		{Bytes(512), "512 B"}, {Bytes(3328599345), "3.1 GiB"}, {Bytes(47395635), "45.2 MiB"}, {Bytes(1536), "1.5 KiB"},
		{Age(41*24*time.Hour + time.Hour), "41d"}, {Age(5 * time.Hour), "5h"}, {Age(90 * time.Second), "1m"}, {Age(3 * time.Second), "3s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestPlanPurgeRuns: quarantine runs due for purging get their own line in
// the remove_orphan_files action, beside the orphans or alone.
func TestPlanPurgeRuns(t *testing.T) {
	runs := []diff.PurgeRun{
		{RunID: "20261101T000000Z", Files: 30, Bytes: 4 << 20, CreatedAtMs: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{RunID: "20261120T093000Z", Files: 1, Bytes: 100 << 10, CreatedAtMs: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC).UnixMilli()},
	}
	for _, tc := range []struct {
		name   string
		orphan diff.OrphansAction
		want   string
	}{
		{"alone", diff.OrphansAction{Paths: []string{}, OlderThan: "3d", Quarantine: "7d", PurgeRuns: runs},
			"      - purge 2 quarantine runs (31 files, 4.1 MiB) quarantined on or before 2026-11-20\n      # orphan_files.quarantine = \"7d\" (main.icewright.hcl:9)\n"},
		{"beside orphans", diff.OrphansAction{Count: 1, Bytes: 10, Paths: []string{"/t/x.parquet"}, OlderThan: "3d", Quarantine: "7d", PurgeRuns: runs[1:]},
			"      - remove 1 orphan file (10 B) older than 3d; moved to quarantine for 7d\n      - purge 1 quarantine run (1 file, 100.0 KiB) quarantined on or before 2026-11-20\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.orphan
			p := &diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.c", Actions: []diff.Action{
				{Type: diff.RemoveOrphanFiles, Destructive: true, Reason: `orphan_files.quarantine = "7d" (main.icewright.hcl:9)`, Orphans: &o}}}}}
			diff.Summarize(p)
			var buf bytes.Buffer
			if err := Plan(&buf, p, NewStyles(false)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tc.want) || strings.Contains(buf.String(), "remove 0 orphan files") {
				t.Errorf("got\n%s\nwant it to contain\n%s", buf.String(), tc.want)
			}
		})
	}
}

// The expiry line says how many of the files it frees are named by file:
// URIs with percent-escapes and what happens to them (docs/design.md §5.5
// rule 8), and says nothing when there is none.
func TestExpirySentenceEscapedFileURIs(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := &diff.ExpireAction{SnapshotIDs: make([]int64, 4), MaxAge: "1d", FilesToDelete: 9, BytesToDelete: 2048, EscapedFileURIs: 3}
	want := "expire 4 snapshots older than 1d; 0 kept; frees 9 files (2.0 KiB); 3 files named by file: URIs with percent-escapes, each deleted under its literal name only if no file has its decoded name, else left (reported)"
	if got := expireSentence(e, created); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	e.EscapedFileURIs = 0
	if got := expireSentence(e, created); strings.Contains(got, "file: URIs") {
		t.Errorf("no escaped file: URI, but %q", got)
	}
}

// Removing a named ref is its own line with a caution, in text and in the
// Markdown caution block, not a clause at the end of the expiry sentence.
func TestPlanRefRemovalCaution(t *testing.T) {
	p := &diff.Plan{CreatedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Tables: []diff.TablePlan{{
		Address: "lake.a.t",
		Actions: []diff.Action{{Type: diff.ExpireSnapshots, Destructive: true, Expire: &diff.ExpireAction{
			SnapshotIDs: []int64{1}, MaxAge: "5d", Kept: 1, RefsToRemove: []string{"q3-close"},
		}}},
	}}}
	diff.Summarize(p)
	var text bytes.Buffer
	if err := Plan(&text, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := "      - expire 1 snapshot older than 5d; 1 kept\n" +
		"      - remove ref \"q3-close\" (caution: a named tag or branch past max_ref_age; icewright cannot restore it)\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text plan:\n%s\nwant lines:\n%s", text.String(), want)
	}
	var md bytes.Buffer
	if err := PlanMarkdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "> - `lake.a.t`: remove ref \"q3-close\" (caution: a named tag or branch past max\\_ref\\_age; icewright cannot restore it)\n") {
		t.Errorf("markdown plan:\n%s", md.String())
	}
}

// -compact-warnings: a table warning is one line per code, naming every
// table it concerns; the full form has a line per table with the code.
// Both go to stderr (PlanProblems).
func TestPlanCompactWarnings(t *testing.T) {
	w := func(code string) diff.Warning {
		return diff.NewWarning(code, "message of "+code, "main.icewright.hcl:3")
	}
	p := &diff.Plan{Tables: []diff.TablePlan{
		{Address: "lake.a.one", Warnings: []diff.Warning{w("IW107"), w("IW105")}},
		{Address: "lake.a.two", Warnings: []diff.Warning{w("IW107")}},
	}}
	diff.Summarize(p)
	var full, compact bytes.Buffer
	if err := PlanProblems(&full, p, NewStyles(false), false); err != nil {
		t.Fatal(err)
	}
	if err := PlanProblems(&compact, p, NewStyles(false), true); err != nil {
		t.Fatal(err)
	}
	if want := "Warnings:\n" +
		"  ! IW107 lake.a.one: message of IW107 (main.icewright.hcl:3)\n" +
		"  ! IW105 lake.a.one: message of IW105 (main.icewright.hcl:3)\n" +
		"  ! IW107 lake.a.two: message of IW107 (main.icewright.hcl:3)\n"; !strings.Contains(full.String(), want) {
		t.Errorf("full:\n%s\nwant:\n%s", full.String(), want)
	}
	if want := "Warnings:\n" +
		"  ! IW107 orphan_age_below_commit_gap: lake.a.one, lake.a.two\n" +
		"  ! IW105 gc_disabled: lake.a.one\n\n"; !strings.Contains(compact.String(), want) {
		t.Errorf("compact:\n%s\nwant:\n%s", compact.String(), want)
	}
}

// TestPlanDanglingDeletesAndStaleSort: remove_dangling_deletes says how many delete
// files leave the metadata and what happens to their manifests, and the
// stale-sort reason of a compaction shows as a reason line of its own.
func TestPlanDanglingDeletesAndStaleSort(t *testing.T) {
	p := &diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.c", Actions: []diff.Action{
		{Type: diff.RemoveDanglingDeletes, Reason: "dangling_deletes (main.icewright.hcl:7): 2 position delete files apply to no live data file",
			DanglingDeletes: &diff.DanglingDeletes{DeleteFiles: 2, DeleteBytes: 3850, PositionDeletes: 2, ManifestsRewritten: 1, SpecIDs: []int{0}}},
		{Type: diff.Compact, Reason: `compaction.min_file_size = "48MiB" (default; block at main.icewright.hcl:3); 2 files written under another sort order than the rewrite's, taken whatever their size: compaction.strategy = "sort" (main.icewright.hcl:4)`,
			Compact: &diff.CompactAction{Strategy: "sort", InputFiles: 2, InputBytes: 2048, Partitions: 2, EstimatedOutputFiles: 2,
				Groups: []diff.CompactGroup{{Partition: "r=eu", InputFiles: 1, InputBytes: 1024, EstimatedOutputFiles: 1, StaleSortFiles: 1}}}},
	}}}}
	diff.Summarize(p)
	var buf bytes.Buffer
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      ~ remove 2 dangling delete files (3.8 KiB) from the metadata: 0 delete manifests dropped, 1 rewritten\n      # dangling_deletes (main.icewright.hcl:7): 2 position delete files apply to no live data file\n",
		"      # 2 files written under another sort order than the rewrite's, taken whatever their size: compaction.strategy = \"sort\" (main.icewright.hcl:4)\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("got\n%s\nwant it to contain\n%s", buf.String(), want)
		}
	}
}

// TestPlanAgePartitions: age_partitions says how much it rewrites into
// which spec, and lists each coarser partition with the finer ones it
// takes; with default = true and nothing old yet it says it only makes the
// spec the default.
func TestPlanAgePartitions(t *testing.T) {
	p := &diff.Plan{Tables: []diff.TablePlan{{Address: "a.b.c", Actions: []diff.Action{
		{Type: diff.AgePartitions, Reason: "partition_ageing (main.icewright.hcl:7): day partitions of ts whose month ended 90d ago or more, into 2 month partitions of new spec 1, not the default",
			PartitionAgeing: &diff.PartitionAgeing{After: "90d", From: "day", To: "month", Column: "ts", TargetSpecID: 1, AddsSpec: true, InputFiles: 5, InputBytes: 5 << 10, Records: 50,
				Groups: []diff.AgeingGroup{
					{Partition: "ts_month=2024-01", Sources: []string{"ts_day=2024-01-01", "ts_day=2024-01-31"}, InputFiles: 3, InputBytes: 3 << 10, Records: 30},
					{Partition: "ts_month=2024-02", Sources: []string{"ts_day=2024-02-01"}, InputFiles: 2, InputBytes: 2 << 10, Records: 20}}}},
	}}, {Address: "a.b.d", Actions: []diff.Action{
		{Type: diff.AgePartitions, Reason: "partition_ageing.default (main.icewright.hcl:9): no day partition of ts is old enough yet; new spec 1, made the default",
			PartitionAgeing: &diff.PartitionAgeing{After: "90d", From: "day", To: "month", Column: "ts", TargetSpecID: 1, AddsSpec: true, SetsDefault: true, Groups: []diff.AgeingGroup{}}},
	}}}}
	diff.Summarize(p)
	var buf bytes.Buffer
	if err := Plan(&buf, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      » age 5 files (5.0 KiB, 50 records) of day partitions into 2 month partitions of new spec 1 (not the default)\n" +
			"          ts_month=2024-01 <- 2 day partitions (3 files, 3.0 KiB)\n" +
			"          ts_month=2024-02 <- 1 day partition (2 files, 2.0 KiB)\n",
		"      ~ make new spec 1 (month of ts) the default partition spec; no day partition is old enough yet\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("got\n%s\nwant it to contain\n%s", buf.String(), want)
		}
	}
}
