package apply

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/orphans"
	"github.com/icewright/icewright/providers/testkit"
)

// quarantineHCL manages lake.sales.* with orphan removal into a 7-day
// quarantine and nothing else, so remove_orphan_files is the only action.
const quarantineHCL = `
policy "q" {
  orphan_files {
    older_than = "3d"
    quarantine = "7d"
  }
}

tables "lake.sales.*" {
  policy = policy.q
}
`

func newQuarantineEnv(t *testing.T) (*env, *table.Table) {
	t.Helper()
	dir := t.TempDir()
	lake := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	e := &env{t: t, dir: dir, lake: lake}
	e.writeConfig(lake.HCL() + quarantineHCL)
	tbl := lake.CreateTable(t, orders, testkit.TableOptions{})
	return e, testkit.Append(t, tbl, 2, 10, 1)
}

// qrun is a quarantine run written as an earlier quarantining apply leaves
// it: files under .icewright-quarantine/<id>/ and a manifest.
type qrun struct {
	id          string
	dir         string
	originals   []string
	quarantined []string
}

func writeRun(t *testing.T, tbl *table.Table, id string, created, purgeAfter time.Time, rels ...string) qrun {
	t.Helper()
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	r := qrun{id: id, dir: filepath.Join(loc, orphans.QuarantineDir, id)}
	man := orphans.QuarantineManifest{RunID: id, Table: orders, TableUUID: tbl.Metadata().TableUUID().String(),
		CreatedAt: created.UTC(), PurgeAfter: purgeAfter.UTC()}
	old := created.Add(-10 * 24 * time.Hour)
	for _, rel := range rels {
		q := filepath.Join(r.dir, rel)
		if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(q, []byte("quarantined "+rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(q, old, old); err != nil {
			t.Fatal(err)
		}
		orig := filepath.Join(loc, rel)
		r.originals = append(r.originals, orig)
		r.quarantined = append(r.quarantined, q)
		man.Files = append(man.Files, diff.QuarantinedFile{Original: orig, Quarantined: q,
			Size: int64(len("quarantined " + rel)), Mtime: old.UTC(), Moved: true})
	}
	writeManifest(t, r, man)
	return r
}

func writeManifest(t *testing.T, r qrun, man orphans.QuarantineManifest) {
	t.Helper()
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, orphans.QuarantineManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustExist(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

func mustBeGone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still exists (%v)", p, err)
		}
	}
}

func purgeRunIDs(a *diff.Action) []string {
	var ids []string
	if a != nil && a.Orphans != nil {
		for _, r := range a.Orphans.PurgeRuns {
			ids = append(ids, r.RunID)
		}
	}
	return ids
}

func (e *env) applyAt(p *diff.Plan, saved bool, now time.Time) *Results {
	e.t.Helper()
	res, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Saved: saved, Version: "test",
		Now: func() time.Time { return now }})
	if err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return res
}

// TestQuarantinePurgeOnlyPlannedRuns: a table with no new orphans but a
// quarantine run past its purge time gets a plan that shows the purge
// (the JSON has purge_runs), and its saved plan's apply purges exactly that
// run. A run not yet due is neither shown nor purged; a run that becomes
// due between plan and apply is not purged (the reviewer never saw it) and
// the next plan shows it; restore still works on a run left in place.
func TestQuarantinePurgeOnlyPlannedRuns(t *testing.T) {
	e, tbl := newQuarantineEnv(t)
	now := time.Now()
	due := writeRun(t, tbl, "20261101T000000Z", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/a.parquet", "metadata/b-m0.avro")
	young := writeRun(t, tbl, "20261127T000000Z", now.Add(-2*24*time.Hour), now.Add(5*24*time.Hour), "data/c.parquet")
	soon := writeRun(t, tbl, "20261123T000000Z", now.Add(-7*24*time.Hour), now.Add(time.Hour), "data/d.parquet")

	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	orph := actionOf(tp, diff.RemoveOrphanFiles)
	if got := purgeRunIDs(orph); !slices.Equal(got, []string{due.id}) {
		t.Fatalf("planned purge runs %v, want [%s]; plan %+v", got, due.id, tp)
	}
	if orph.Orphans.Count != 0 || len(orph.Orphans.Paths) != 0 || len(tp.Actions) != 1 {
		t.Fatalf("a purge-only plan has orphans or other actions: %+v", tp.Actions)
	}
	pr := orph.Orphans.PurgeRuns[0]
	if pr.Files != 2 || pr.Bytes != int64(len("quarantined data/a.parquet")+len("quarantined metadata/b-m0.avro")) ||
		!strings.HasPrefix(pr.ManifestDigest, "sha256:") || pr.PurgeAfterMs != now.Add(-13*24*time.Hour).UnixMilli() {
		t.Fatalf("purge run %+v", pr)
	}
	doc, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"purge_runs":[{"run_id":"20261101T000000Z","files":2,`, `"manifest_digest":"sha256:`, `"count":0`} {
		if !strings.Contains(string(doc), want) {
			t.Fatalf("plan JSON lacks %s:\n%s", want, doc)
		}
	}
	saved := roundTrip(t, p)

	// Applied two hours later: soon is due by then, but not in the plan.
	res := e.applyAt(saved, true, now.Add(2*time.Hour))
	tr := tableResult(t, res, "lake."+orders)
	if len(tr.Actions) != 1 || tr.Actions[0].Status != StatusDone || tr.Actions[0].FilesDeleted != 2 ||
		!strings.Contains(tr.Actions[0].Reason, "purged quarantine runs "+due.id+" (2 files") {
		t.Fatalf("results:\n%s", describe(res))
	}
	mustBeGone(t, due.dir)
	mustExist(t, young.quarantined...)
	mustExist(t, soon.quarantined...)
	mustExist(t, filepath.Join(soon.dir, orphans.QuarantineManifestName), filepath.Join(young.dir, orphans.QuarantineManifestName))
	checkReferencedExist(t, e.lake.Reload(t, orders))

	// The next plan, at that time, shows the run that became due.
	next, err := Plan(context.Background(), e.cfg, e.sess, PlanOptions{Version: "test", Now: func() time.Time { return now.Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := purgeRunIDs(actionOf(tablePlan(t, next, "lake."+orders), diff.RemoveOrphanFiles)); !slices.Equal(got, []string{soon.id}) {
		t.Fatalf("next plan purges %v, want [%s]", got, soon.id)
	}

	// The young run was never touched: restore puts its file back.
	rr, err := e.sess.RestoreQuarantine(context.Background(), "lake."+orders, young.id)
	if err != nil || len(rr.Restored) != 1 || len(rr.Refused) != 0 {
		t.Fatalf("restore %+v %v", rr, err)
	}
	if b, err := os.ReadFile(young.originals[0]); err != nil || string(b) != "quarantined data/c.parquet" {
		t.Fatalf("restored file %q %v", b, err)
	}
}

// TestSavedPlanQuarantineRunChangedMeanwhile: between a saved plan and its
// apply, one listed run is restored (its manifest is gone) and another's
// manifest is rewritten; a writer also commits, so apply re-plans the
// table. Only the untouched listed run is purged; the restored files and
// the changed run stay, and the results say why.
func TestSavedPlanQuarantineRunChangedMeanwhile(t *testing.T) {
	e, tbl := newQuarantineEnv(t)
	now := time.Now()
	keep := writeRun(t, tbl, "r-kept", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/k.parquet")
	restored := writeRun(t, tbl, "r-restored", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/r.parquet")
	changed := writeRun(t, tbl, "r-changed", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/c.parquet")

	p := roundTrip(t, e.plan())
	if got := purgeRunIDs(actionOf(tablePlan(t, p, "lake."+orders), diff.RemoveOrphanFiles)); !slices.Equal(got, []string{"r-changed", "r-kept", "r-restored"}) {
		t.Fatalf("planned purge runs %v", got)
	}

	if rr, err := e.sess.RestoreQuarantine(context.Background(), "lake."+orders, restored.id); err != nil || len(rr.Restored) != 1 {
		t.Fatalf("restore %+v %v", rr, err)
	}
	// Someone adds a file to the changed run (its manifest now names it).
	extra := filepath.Join(changed.dir, "data", "extra.parquet")
	if err := os.WriteFile(extra, []byte("someone's"), 0o644); err != nil {
		t.Fatal(err)
	}
	var man orphans.QuarantineManifest
	b, err := os.ReadFile(filepath.Join(changed.dir, orphans.QuarantineManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	man.Files = append(man.Files, diff.QuarantinedFile{Original: filepath.Join(filepath.Dir(changed.originals[0]), "extra.parquet"), Quarantined: extra, Size: 9, Moved: true})
	writeManifest(t, changed, man)
	// A writer commits: apply re-plans the table and bounds it by the plan.
	testkit.Append(t, e.lake.Reload(t, orders), 1, 5, 1)

	res := e.apply(p, true)
	tr := tableResult(t, res, "lake."+orders)
	if !tr.Replanned || len(tr.Actions) != 1 || tr.Actions[0].Status != StatusDone || tr.Actions[0].FilesDeleted != 1 {
		t.Fatalf("results:\n%s", describe(res))
	}
	notes := strings.Join(tr.Actions[0].NotApplied, "\n")
	for _, want := range []string{"quarantine run r-changed: manifest changed since the plan, not purged", "quarantine run r-restored: no longer due or gone, not purged"} {
		if !strings.Contains(notes, want) {
			t.Fatalf("notes lack %q:\n%s", want, notes)
		}
	}
	mustBeGone(t, keep.dir)
	mustExist(t, changed.quarantined[0], extra, restored.originals[0])

	// The same on a table nobody wrote to (apply runs the plan as it is and
	// the provider re-checks each listed run's manifest).
	e2, tbl2 := newQuarantineEnv(t)
	r1 := writeRun(t, tbl2, "r-1", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/x.parquet")
	r2 := writeRun(t, tbl2, "r-2", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour), "data/y.parquet")
	p2 := roundTrip(t, e2.plan())
	if err := os.Remove(filepath.Join(r1.dir, orphans.QuarantineManifestName)); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(r2.dir, orphans.QuarantineManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r2.dir, orphans.QuarantineManifestName), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	res = e2.apply(p2, true)
	tr = tableResult(t, res, "lake."+orders)
	if tr.Replanned || len(tr.Actions) != 1 || tr.Actions[0].Status != StatusSkipped || tr.Actions[0].FilesDeleted != 0 ||
		!strings.Contains(tr.Actions[0].Reason, "r-1: its manifest is gone since the plan") ||
		!strings.Contains(tr.Actions[0].Reason, "r-2: manifest changed since the plan, kept") {
		t.Fatalf("results:\n%s", describe(res))
	}
	mustExist(t, r1.quarantined[0], r2.quarantined[0])
}

// TestPlanRefusesPurgeOfReferencedRun: a due run holding a file that the
// table references (a slow writer committed it after it was quarantined)
// is the only copy of live data. The referenced file is missing from the
// listing, so the plan refuses orphan removal, purge included (rule 3),
// and names the file and the run to restore; apply then deletes nothing.
func TestPlanRefusesPurgeOfReferencedRun(t *testing.T) {
	e, tbl := newQuarantineEnv(t)
	now := time.Now()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	live := strings.TrimPrefix(tasks[0].File.FilePath(), "file://")
	r := writeRun(t, tbl, "r-live", now.Add(-20*24*time.Hour), now.Add(-13*24*time.Hour))
	rel, err := filepath.Rel(strings.TrimPrefix(tbl.Location(), "file://"), live)
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(live, q); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, r, orphans.QuarantineManifest{RunID: r.id, TableUUID: tbl.Metadata().TableUUID().String(),
		CreatedAt: now.Add(-20 * 24 * time.Hour), PurgeAfter: now.Add(-13 * 24 * time.Hour),
		Files: []diff.QuarantinedFile{{Original: live, Quarantined: q, Size: 1, Moved: true}}})

	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if actionOf(tp, diff.RemoveOrphanFiles) != nil || len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, filepath.Base(live)) ||
		!strings.Contains(tp.Refusals[0].Reason, "quarantine run r-live holds "+live+": run icewright restore r-live") {
		t.Fatalf("plan %+v", tp)
	}
	res := e.apply(p, false)
	if tr := tableResult(t, res, "lake."+orders); tr.Refused() == "" || !res.Failed() {
		t.Fatalf("results:\n%s", describe(res))
	}
	mustExist(t, q, filepath.Join(r.dir, orphans.QuarantineManifestName))
}
