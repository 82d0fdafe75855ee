package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// cleanScan is a scan with nothing wrong and no candidates.
func cleanScan(st *TableState) *OrphanScan {
	return &OrphanScan{
		Roots:       []string{"s3://b/t/"},
		ListedFiles: 100,
		Referenced:  90,
		Categories:  map[string]int64{"manifest_list": 3, "manifest": 3, "data": 80, "metadata": 4},
	}
}

func TestOrphanRefusals(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(p *TableState)
		want  string // substring of the refusal; "" = no refusal
		props map[string]string
	}{
		{name: "clean", edit: func(*TableState) {}},
		{name: "gc disabled", edit: func(s *TableState) { s.Properties["gc.enabled"] = "false" }, want: "gc.enabled"},
		{name: "gc odd value", edit: func(s *TableState) { s.Properties["gc.enabled"] = "no" }, want: "gc.enabled"},
		{name: "provider refusal", edit: func(s *TableState) { s.Orphans.Refusal = "location outside warehouse" }, want: "location outside warehouse"},
		{name: "no scan", edit: func(s *TableState) { s.Orphans = nil }, want: "not scanned"},
		{name: "partial listing", edit: func(s *TableState) {
			s.Orphans.MissingReferencedCount = 2
			s.Orphans.MissingReferenced = []string{"s3://b/t/data/a.parquet"}
		}, want: "partial"},
		{name: "empty category", edit: func(s *TableState) { s.Orphans.Categories["manifest"] = 0 }, want: "manifest files"},
		{name: "missing category", edit: func(s *TableState) { delete(s.Orphans.Categories, "metadata") }, want: "metadata files"},
		{name: "nested table", edit: func(s *TableState) { s.Orphans.NestedTables = []string{"lake.db.inner"} }, want: "lake.db.inner"},
		{name: "prefix mismatch", edit: func(s *TableState) { s.Orphans.PrefixMismatches = []string{"s3a://b/t/data/a.parquet"} }, want: "scheme or authority"},
		{name: "ratio", edit: func(s *TableState) {
			for i := range 40 {
				s.Orphans.Candidates = append(s.Orphans.Candidates, FileInfo{Path: "s3://b/t/data/o" + string(rune('a'+i)), MtimeMs: ago(10 * day)})
			}
		}, want: "max_orphan_ratio = 0.25 (main.icewright.hcl:22)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := linear(1 * day)
			st.Orphans = cleanScan(st)
			st.Orphans.Candidates = []FileInfo{{Path: "s3://b/t/data/old.parquet", Size: 7, MtimeMs: ago(4 * day)}}
			tt.edit(st)
			tp := PlanTable(fullPolicy(), st, testNow)
			var refusal string
			for _, r := range tp.Refusals {
				if r.Action == string(RemoveOrphanFiles) {
					refusal = r.Reason
				}
			}
			if tt.want == "" {
				if refusal != "" {
					t.Fatalf("refused: %s", refusal)
				}
				a := findAction(t, tp, RemoveOrphanFiles)
				if a.Orphans.Count != 1 || a.Reason != `orphan_files.older_than = "3d" (main.icewright.hcl:21)` {
					t.Fatalf("action = %+v %q", a.Orphans, a.Reason)
				}
				return
			}
			if !strings.Contains(refusal, tt.want) {
				t.Fatalf("refusal = %q, want it to mention %q", refusal, tt.want)
			}
			for _, a := range tp.Actions {
				if a.Type == RemoveOrphanFiles {
					t.Fatal("refused orphan removal still planned")
				}
			}
			if tp.Empty() {
				t.Fatal("a plan with a refusal is not empty")
			}
		})
	}
}

func TestOrphanAgeGuardAndNonIceberg(t *testing.T) {
	st := linear(1 * day)
	st.Orphans = cleanScan(st)
	cutoff := testNow.Add(-3 * day).UnixMilli()
	st.Orphans.Candidates = []FileInfo{
		{Path: "s3://b/t/data/b-old.parquet", Size: 10, MtimeMs: cutoff - 1},
		{Path: "s3://b/t/data/a-old.parquet", Size: 20, MtimeMs: ago(30 * day)},
		{Path: "s3://b/t/data/at-cutoff.parquet", Size: 40, MtimeMs: cutoff},
		{Path: "s3://b/t/data/young.parquet", Size: 80, MtimeMs: ago(1 * day)},
		{Path: "s3://b/t/data/link.parquet", Size: 1, MtimeMs: ago(30 * day)},
	}
	st.Orphans.Symlinks = []string{"s3://b/t/data/link.parquet"}
	st.Orphans.NonIceberg = []FileInfo{{Path: "s3://b/t/data/_SUCCESS", Size: 0, MtimeMs: ago(30 * day)}}
	st.Orphans.Excluded = 3

	pol := fullPolicy()
	a := findAction(t, PlanTable(pol, st, testNow), RemoveOrphanFiles).Orphans
	want := &OrphansAction{
		Count: 2, Bytes: 30,
		Paths:          []string{"s3://b/t/data/a-old.parquet", "s3://b/t/data/b-old.parquet"},
		OlderThan:      "3d",
		OlderThanMs:    (3 * day).Milliseconds(),
		KeptByAgeGuard: 2, KeptBytes: 120,
		Excluded: 3, NonIceberg: 1, NonIcebergPaths: []string{"s3://b/t/data/_SUCCESS"},
		Ratio: 5.0 / 95.0, MaxRatio: 0.25,
	}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("orphans =\n%+v\nwant\n%+v", a, want)
	}

	pol.OrphanFiles.IncludeNonIcebergFiles = set(true, 23)
	a = findAction(t, PlanTable(pol, st, testNow), RemoveOrphanFiles).Orphans
	if a.Count != 3 || a.Paths[0] != "s3://b/t/data/_SUCCESS" {
		t.Fatalf("with non-Iceberg files: %+v", a)
	}

	t.Run("only young files: no action", func(t *testing.T) {
		s2 := linear(1 * day)
		s2.Orphans = cleanScan(s2)
		s2.Orphans.Candidates = []FileInfo{{Path: "s3://b/t/x", MtimeMs: ago(1 * day)}}
		tp := PlanTable(fullPolicy(), s2, testNow)
		if !tp.Empty() {
			t.Fatalf("plan = %v %v", actionTypes(tp), tp.Refusals)
		}
	})
	t.Run("ratio not enforced below min_files_for_ratio", func(t *testing.T) {
		s2 := linear(1 * day)
		s2.Orphans = &OrphanScan{ListedFiles: 6, Referenced: 5, Categories: cleanScan(s2).Categories,
			Candidates: []FileInfo{{Path: "s3://b/t/x", MtimeMs: ago(10 * day)}, {Path: "s3://b/t/y", MtimeMs: ago(10 * day)}}}
		p := fullPolicy()
		p.OrphanFiles.MinFilesForRatio = set(10, 24)
		a := findAction(t, PlanTable(p, s2, testNow), RemoveOrphanFiles)
		if a.Orphans.Count != 2 {
			t.Fatalf("orphans = %+v", a.Orphans)
		}
	})
	t.Run("prefix mismatch ignored keeps mismatched files", func(t *testing.T) {
		s2 := linear(1 * day)
		s2.Orphans = cleanScan(s2)
		s2.Orphans.Candidates = []FileInfo{{Path: "s3a://b/t/m", MtimeMs: ago(10 * day)}, {Path: "s3://b/t/o", MtimeMs: ago(10 * day)}}
		s2.Orphans.PrefixMismatches = []string{"s3a://b/t/m"}
		p := fullPolicy()
		p.OrphanFiles.PrefixMismatch = set("ignore", 25)
		a := findAction(t, PlanTable(p, s2, testNow), RemoveOrphanFiles)
		if !reflect.DeepEqual(a.Orphans.Paths, []string{"s3://b/t/o"}) {
			t.Fatalf("paths = %v", a.Orphans.Paths)
		}
	})
	t.Run("older_than below floor", func(t *testing.T) {
		p := fullPolicy()
		p.OrphanFiles.OlderThan = set(day-1, 21)
		tp := PlanTable(p, st, testNow)
		if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "24h") {
			t.Fatalf("refusals = %v", tp.Refusals)
		}
	})
	t.Run("table without snapshots needs no categories", func(t *testing.T) {
		s2 := linear()
		s2.Orphans = &OrphanScan{ListedFiles: 2, Candidates: []FileInfo{{Path: "s3://b/t/x", MtimeMs: ago(10 * day)}}}
		p := fullPolicy()
		p.OrphanFiles.MaxOrphanRatio = set(1.0, 22)
		a := findAction(t, PlanTable(p, s2, testNow), RemoveOrphanFiles)
		if a.Orphans.Count != 1 {
			t.Fatalf("orphans = %+v", a.Orphans)
		}
	})
}

// TestOrphanPurgeRuns: quarantine runs whose purge_after has passed at now
// are part of remove_orphan_files (also without any new orphan); runs not
// yet due, without a purge time, or with a problem are not; a refusal
// stops the purge with the rest; the JSON carries the runs.
func TestOrphanPurgeRuns(t *testing.T) {
	runs := []QuarantineRun{
		{RunID: "20261101T000000Z", Files: 3, Bytes: 300, CreatedAtMs: ago(30 * day), PurgeAfterMs: ago(23 * day), ManifestDigest: "sha256:b"},
		{RunID: "20261120T000000Z", Files: 1, Bytes: 10, CreatedAtMs: ago(10 * day), PurgeAfterMs: testNow.UnixMilli(), ManifestDigest: "sha256:c"}, // due at exactly now
		{RunID: "20261125T000000Z", Files: 5, Bytes: 50, CreatedAtMs: ago(5 * day), PurgeAfterMs: testNow.Add(2 * day).UnixMilli(), ManifestDigest: "sha256:d"},
		{RunID: "forever", Files: 2, Bytes: 2, CreatedAtMs: ago(90 * day), ManifestDigest: "sha256:e"},
		{RunID: "broken", Problem: "manifest unreadable: EOF"},
		{RunID: "evil", Files: 1, PurgeAfterMs: ago(day), ManifestDigest: "sha256:f", Problem: "manifest names files outside the run (x)"},
		{RunID: "0-first", Files: 1, Bytes: 1, CreatedAtMs: ago(40 * day), PurgeAfterMs: ago(33 * day), ManifestDigest: "sha256:a"},
	}
	pol := fullPolicy()
	pol.OrphanFiles.Quarantine = set(7*day, 25)
	wantRuns := []PurgeRun{
		{RunID: "0-first", Files: 1, Bytes: 1, CreatedAtMs: ago(40 * day), PurgeAfterMs: ago(33 * day), ManifestDigest: "sha256:a"},
		{RunID: "20261101T000000Z", Files: 3, Bytes: 300, CreatedAtMs: ago(30 * day), PurgeAfterMs: ago(23 * day), ManifestDigest: "sha256:b"},
		{RunID: "20261120T000000Z", Files: 1, Bytes: 10, CreatedAtMs: ago(10 * day), PurgeAfterMs: testNow.UnixMilli(), ManifestDigest: "sha256:c"},
	}

	t.Run("due runs and no orphans", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs
		a := findAction(t, PlanTable(pol, st, testNow), RemoveOrphanFiles)
		if !a.Destructive || a.Orphans.Count != 0 || len(a.Orphans.Paths) != 0 || !reflect.DeepEqual(a.Orphans.PurgeRuns, wantRuns) {
			t.Fatalf("action %+v runs %+v", a, a.Orphans.PurgeRuns)
		}
		if a.Reason != `orphan_files.quarantine = "7d" (main.icewright.hcl:25)` {
			t.Fatalf("reason %q", a.Reason)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var back Action
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Orphans.PurgeRuns, wantRuns) || !strings.Contains(string(b), `"purge_runs":[{"run_id":"0-first","files":1,"bytes":1,`) ||
			!strings.Contains(string(b), `"manifest_digest":"sha256:a"`) {
			t.Fatalf("json %s", b)
		}
	})
	t.Run("due runs beside orphans", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Candidates = []FileInfo{{Path: "s3://b/t/data/old.parquet", Size: 7, MtimeMs: ago(4 * day)}}
		st.Orphans.Quarantine = runs
		a := findAction(t, PlanTable(pol, st, testNow), RemoveOrphanFiles)
		if a.Orphans.Count != 1 || len(a.Orphans.PurgeRuns) != 3 || a.Reason != `orphan_files.older_than = "3d" (main.icewright.hcl:21)` {
			t.Fatalf("action %+v %q", a.Orphans, a.Reason)
		}
	})
	t.Run("nothing due: no action", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs[2:6]
		if tp := PlanTable(pol, st, testNow); !tp.Empty() {
			t.Fatalf("plan = %v %v", actionTypes(tp), tp.Refusals)
		}
	})
	t.Run("a run holding referenced files is never due", func(t *testing.T) {
		held := slices.Clone(runs)
		held[len(held)-1].Referenced = []string{"s3://b/t/data/live.parquet"} // 0-first
		if got := DuePurgeRuns(held, testNow); len(got) != 2 || got[0].RunID == "0-first" {
			t.Fatalf("due %+v", got)
		}
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = held
		st.Orphans.MissingReferencedCount = 1
		st.Orphans.MissingReferenced = []string{"s3://b/t/data/live.parquet"}
		tp := PlanTable(pol, st, testNow)
		if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "quarantine run 0-first holds s3://b/t/data/live.parquet: run icewright restore 0-first "+st.Address) {
			t.Fatalf("refusals %+v", tp.Refusals)
		}
	})
	t.Run("a refusal stops the purge too", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs
		st.Orphans.NestedTables = []string{"lake.db.inner"}
		tp := PlanTable(pol, st, testNow)
		if slices.Contains(actionTypes(tp), RemoveOrphanFiles) || len(tp.Refusals) == 0 {
			t.Fatalf("plan = %v %v", actionTypes(tp), tp.Refusals)
		}
	})
}

// TestQuarantineStuckWarnings: a run apply can never purge (a problem with
// its manifest, or files the table references again) becomes a plan
// warning naming the run, the reason and what to do, whether or not it is
// due, and even when remove_orphan_files is refused; it is still never
// purged. Healthy runs, due or not, do not warn.
func TestQuarantineStuckWarnings(t *testing.T) {
	runs := []QuarantineRun{
		{RunID: "due", Files: 1, Bytes: 1, CreatedAtMs: ago(40 * day), PurgeAfterMs: ago(33 * day), ManifestDigest: "sha256:a"},
		{RunID: "waiting", Files: 5, Bytes: 50, CreatedAtMs: ago(5 * day), PurgeAfterMs: testNow.Add(2 * day).UnixMilli(), ManifestDigest: "sha256:b"},
		{RunID: "broken", Problem: "manifest unreadable: EOF"},
		{RunID: "evil", Files: 1, PurgeAfterMs: ago(day), ManifestDigest: "sha256:c", Problem: "manifest names files outside the run (x)"},
		{RunID: "held", Files: 3, CreatedAtMs: ago(5 * day), PurgeAfterMs: testNow.Add(2 * day).UnixMilli(), ManifestDigest: "sha256:d",
			Referenced: []string{"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet"}},
		{RunID: "held1", Files: 1, PurgeAfterMs: ago(day), ManifestDigest: "sha256:e", Referenced: []string{"s3://b/t/data/c.parquet"}},
	}
	want := []Warning{
		{Code: config.LintQuarantineStuck, Name: "quarantine_run_stuck", Message: "quarantine run broken is never purged: manifest unreadable: EOF; inspect its manifest (.icewright-quarantine/broken/.icewright-manifest.json in the table location), then fix or remove the run by hand"},
		{Code: config.LintQuarantineStuck, Name: "quarantine_run_stuck", Message: "quarantine run evil is never purged: manifest names files outside the run (x); inspect its manifest (.icewright-quarantine/evil/.icewright-manifest.json in the table location), then fix or remove the run by hand"},
		{Code: config.LintQuarantineStuck, Name: "quarantine_run_stuck", Message: "quarantine run held is never purged: 2 files of this run are referenced by the table again; put them back with icewright restore held lake.db.t"},
		{Code: config.LintQuarantineStuck, Name: "quarantine_run_stuck", Message: "quarantine run held1 is never purged: 1 file of this run is referenced by the table again; put it back with icewright restore held1 lake.db.t"},
	}
	pol := fullPolicy()
	pol.OrphanFiles.Quarantine = set(7*day, 25)

	t.Run("stuck runs warn, healthy ones do not, none of them is purged", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs
		tp := PlanTable(pol, st, testNow)
		if !reflect.DeepEqual(tp.Warnings, want) {
			t.Fatalf("warnings:\n%+v\nwant:\n%+v", tp.Warnings, want)
		}
		a := findAction(t, tp, RemoveOrphanFiles)
		if len(a.Orphans.PurgeRuns) != 1 || a.Orphans.PurgeRuns[0].RunID != "due" {
			t.Fatalf("purge runs %+v", a.Orphans.PurgeRuns)
		}
	})
	t.Run("when the listing named only some missing files, the count is a lower bound", func(t *testing.T) {
		for _, r := range []QuarantineRun{runs[4], runs[5]} {
			got := r.StuckReason("lake.db.t", true)
			files := fmt.Sprintf("%d files of this run are", len(r.Referenced))
			if len(r.Referenced) == 1 {
				files = "1 file of this run is"
			}
			want := fmt.Sprintf("at least %s referenced by the table again; put them back with icewright restore %s lake.db.t", files, r.RunID)
			if got != want {
				t.Fatalf("%s:\n%s\nwant\n%s", r.RunID, got, want)
			}
		}
	})
	t.Run("healthy runs only: no warning", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs[:2]
		if tp := PlanTable(pol, st, testNow); len(tp.Warnings) != 0 {
			t.Fatalf("warnings %+v", tp.Warnings)
		}
	})
	t.Run("a stuck run alone warns but leaves the table in policy", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs[2:3]
		tp := PlanTable(pol, st, testNow)
		if !tp.Empty() || !reflect.DeepEqual(tp.Warnings, want[:1]) {
			t.Fatalf("plan = %v %v %+v", actionTypes(tp), tp.Refusals, tp.Warnings)
		}
	})
	t.Run("the warnings stay when remove_orphan_files is refused", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = runs
		st.Orphans.MissingReferencedCount = 3
		st.Orphans.MissingReferenced = []string{"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet", "s3://b/t/data/c.parquet"}
		tp := PlanTable(pol, st, testNow)
		if len(tp.Refusals) != 1 || slices.Contains(actionTypes(tp), RemoveOrphanFiles) || !reflect.DeepEqual(tp.Warnings, want) {
			t.Fatalf("plan = %v %v %+v", actionTypes(tp), tp.Refusals, tp.Warnings)
		}
	})
	t.Run("an unlistable quarantine warns without a run id", func(t *testing.T) {
		st := linear(1 * day)
		st.Orphans = cleanScan(st)
		st.Orphans.Quarantine = []QuarantineRun{{Problem: "list .icewright-quarantine: permission denied"}}
		tp := PlanTable(pol, st, testNow)
		w := Warning{Code: config.LintQuarantineStuck, Name: "quarantine_run_stuck", Message: "the quarantine runs are never purged: list .icewright-quarantine: permission denied; check the table location's .icewright-quarantine/ by hand"}
		if !reflect.DeepEqual(tp.Warnings, []Warning{w}) {
			t.Fatalf("warnings %+v", tp.Warnings)
		}
	})
}
