package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
)

// policyHCL is the policy every end-to-end table gets: compact small files,
// expire snapshots older than 2d but keep one, delete orphans older than 2d.
const policyHCL = `
policy "e2e" {
  target_file_size = "64MiB"

  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }

  snapshot_retention {
    max_age       = "2d"
    min_snapshots = 1
  }

  orphan_files {
    older_than       = "2d"
    max_orphan_ratio = 0.9
  }
}
`

// writeConfig writes an icewright configuration managing every table of ns and
// loads it.
func writeConfig(t testing.TB, be *backend, ns string) *config.Config {
	t.Helper()
	return writeConfigWith(t, be, ns, policyHCL)
}

// writeConfigWith is writeConfig with another policy "e2e".
func writeConfigWith(t testing.TB, be *backend, ns, policy string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	src := fmt.Sprintf("catalog %q {\n  %s}\n%s\ntables \"%s.%s.*\" {\n  policy = policy.e2e\n}\n",
		catalogName, be.hcl(catalogName), policy, catalogName, ns)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
	if diags.HasErrors() {
		t.Fatalf("config:\n%s\n%s", src, diags.Error())
	}
	return cfg
}

// run plans and applies cfg at the fixed clock now, and returns the plan and
// the results.
func openSession(cfg *config.Config, now func() time.Time) *providers.Session {
	return providers.Open(cfg, providers.Options{Env: os.Environ(), Now: now})
}

func planApply(ctx context.Context, t testing.TB, cfg *config.Config, now func() time.Time, progress func(apply.Event)) (*diff.Plan, *apply.Results) {
	t.Helper()
	sess := openSession(cfg, now)
	defer sess.Close()
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Now: now, Version: "e2e"})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	res, err := apply.Apply(ctx, cfg, sess, p, apply.ApplyOptions{Now: now, Version: "e2e", Progress: progress, Parallelism: 2})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return p, res
}

func planOnly(ctx context.Context, t testing.TB, cfg *config.Config, now func() time.Time) *diff.Plan {
	t.Helper()
	sess := providers.Open(cfg, providers.Options{Env: os.Environ(), Now: now})
	defer sess.Close()
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Now: now, Version: "e2e"})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

func findTable(t testing.TB, p *diff.Plan, addr string) *diff.TablePlan {
	t.Helper()
	for i := range p.Tables {
		if p.Tables[i].Address == addr {
			return &p.Tables[i]
		}
	}
	t.Fatalf("plan has no table %s; tables %v, errors %v", addr, tableAddrs(p), p.Errors)
	return nil
}

func tableAddrs(p *diff.Plan) []string {
	var out []string
	for _, tp := range p.Tables {
		out = append(out, tp.Address)
	}
	return out
}

func actionOf(tp *diff.TablePlan, typ diff.ActionType) *diff.Action {
	for i := range tp.Actions {
		if tp.Actions[i].Type == typ {
			return &tp.Actions[i]
		}
	}
	return nil
}

func actionTypes(tp *diff.TablePlan) []diff.ActionType {
	var out []diff.ActionType
	for _, a := range tp.Actions {
		out = append(out, a.Type)
	}
	return out
}

// requireConverged fails unless the plan has no errors and no actions.
func requireConverged(t testing.TB, p *diff.Plan) {
	t.Helper()
	if len(p.Errors) > 0 {
		t.Errorf("plan after apply has errors: %+v", p.Errors)
	}
	for _, tp := range p.Tables {
		if len(tp.Actions) > 0 || len(tp.Refusals) > 0 {
			t.Errorf("plan after apply not converged for %s: actions %v refusals %+v", tp.Address, actionTypes(&tp), tp.Refusals)
		}
	}
}

func requireApplied(t testing.TB, res *apply.Results) {
	t.Helper()
	if res.Failed() {
		for _, tr := range res.Tables {
			t.Errorf("apply %s: %s %s", tr.Address, tr.Status, tr.Error)
			for _, a := range tr.Actions {
				t.Errorf("  %s: %s %s %s", a.Type, a.Status, a.Error, a.Reason)
			}
		}
		t.FailNow()
	}
}

// writeOrphan puts a file that no snapshot references in the table's data
// directory.
func writeOrphan(t testing.TB, fsys icebergio.IO, path string) {
	t.Helper()
	w, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		t.Fatalf("IO %T cannot write", fsys)
	}
	if err := w.WriteFile(path, []byte("not referenced by any snapshot: "+path)); err != nil {
		t.Fatalf("write orphan %s: %v", path, err)
	}
}

// sumIDs is a checksum of the rows: the sum of the id column.
func sumIDs(ctx context.Context, t testing.TB, tbl *table.Table) (rows, sum int64) {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan %v: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	col := at.Column(0)
	for _, chunk := range col.Data().Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			sum += chunk.(interface{ Value(int) int64 }).Value(i)
		}
	}
	return at.NumRows(), sum
}

// tagSnapshot creates a tag on snapshot id.
func tagSnapshot(ctx context.Context, t testing.TB, be *backend, ident table.Identifier, name string, id int64) {
	t.Helper()
	_, _, err := be.cat.CommitTable(ctx, ident, nil, []table.Update{table.NewSetSnapshotRefUpdate(name, id, table.TagRef, 0, 0, 0)})
	if err != nil {
		t.Fatalf("tag %s on %v: %v", name, ident, err)
	}
}

// gap sleeps past the second resolution of object stores' modification
// times, so files written before and after a boundary compare as such.
func gap() { time.Sleep(1100 * time.Millisecond) }

// TestPlanApplyConverges runs plan → apply → plan on every combination of
// catalog and storage, on a table with history on both sides of a boundary
// instant B, planned at now = B + 2d: everything written before B is old,
// everything after is young.
func TestPlanApplyConverges(t *testing.T) {
	for _, b := range allBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			convergeOn(t, b.open)
		})
	}
}

// convergeOn is TestPlanApplyConverges on one backend.
func convergeOn(t *testing.T, open backendFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := open(ctx, t)
	ns := testenv.UniqueName(t, "e2e")
	createNamespace(ctx, t, be.cat, ns)
	ident := table.Identifier{ns, "events"}
	addr := catalogName + "." + ns + ".events"
	var opts []catalog.CreateTableOpt
	if loc := be.location(ns, "events"); loc != "" {
		opts = append(opts, catalog.WithLocation(loc))
	}
	tbl, err := be.cat.CreateTable(ctx, ident, eventsSchema, opts...)
	if err != nil {
		t.Fatalf("create %v: %v", ident, err)
	}
	// Old history: six small appends, a tag on the second.
	for i := int64(0); i < 6; i++ {
		tbl = appendRows(ctx, t, tbl, i*50, 50)
	}
	tagged := tbl.Metadata().Snapshots()[1].SnapshotID
	tagSnapshot(ctx, t, be, ident, "audit", tagged)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := strings.TrimSuffix(tbl.Location(), "/") + "/data/"
	oldOrphans := []string{dataDir + "orphan-old-1.parquet", dataDir + "orphan-old-2.parquet"}
	for _, p := range oldOrphans {
		writeOrphan(t, fsys, p)
	}
	gap()
	boundary := time.Now()
	gap()
	// Young history: two more appends and a young orphan.
	tbl, err = be.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(6); i < 8; i++ {
		tbl = appendRows(ctx, t, tbl, i*50, 50)
	}
	youngOrphan := dataDir + "orphan-young.parquet"
	writeOrphan(t, fsys, youngOrphan)

	rowsBefore, sumBefore := sumIDs(ctx, t, tbl)
	if rowsBefore != 400 {
		t.Fatalf("setup: %d rows, want 400", rowsBefore)
	}
	beforeFiles := normalizeAll(listFiles(t, fsys, tbl.Location()))
	youngSnaps := map[int64]bool{}
	var oldManifestLists []string
	for _, s := range tbl.Metadata().Snapshots() {
		switch {
		case time.UnixMilli(s.TimestampMs).After(boundary):
			youngSnaps[s.SnapshotID] = true
		case s.SnapshotID != tagged:
			oldManifestLists = append(oldManifestLists, s.ManifestList)
		}
	}
	if len(oldManifestLists) != 5 {
		t.Fatalf("setup: %d old untagged snapshots, want 5", len(oldManifestLists))
	}

	now := func() time.Time { return boundary.Add(48 * time.Hour) }
	cfg := writeConfig(t, be, ns)
	p, res := planApply(ctx, t, cfg, now, nil)
	tp := findTable(t, p, addr)
	if len(p.Errors) > 0 || len(tp.Refusals) > 0 {
		t.Fatalf("plan errors %+v refusals %+v", p.Errors, tp.Refusals)
	}
	for _, typ := range []diff.ActionType{diff.Compact, diff.ExpireSnapshots, diff.RemoveOrphanFiles} {
		if actionOf(tp, typ) == nil {
			t.Fatalf("plan for %s lacks %s: %v", addr, typ, actionTypes(tp))
		}
	}
	if c := actionOf(tp, diff.Compact).Compact; c.InputFiles != 8 {
		t.Errorf("compact input files = %d, want 8", c.InputFiles)
	}
	orph := actionOf(tp, diff.RemoveOrphanFiles).Orphans
	if orph.Count != 2 || orph.KeptByAgeGuard < 1 {
		t.Errorf("orphans: count %d (want 2) kept by age guard %d (want >= 1); paths %v", orph.Count, orph.KeptByAgeGuard, orph.Paths)
	}
	exp := actionOf(tp, diff.ExpireSnapshots).Expire
	if slices.Contains(exp.SnapshotIDs, tagged) {
		t.Errorf("expiry lists snapshot %d, which tag audit protects", tagged)
	}
	requireApplied(t, res)

	// Rows preserved, small files compacted.
	tbl, err = be.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	rowsAfter, sumAfter := sumIDs(ctx, t, tbl)
	if rowsAfter != rowsBefore || sumAfter != sumBefore {
		t.Errorf("rows after apply: %d (sum %d), want %d (sum %d)", rowsAfter, sumAfter, rowsBefore, sumBefore)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Errorf("data files after compaction = %d, want 1", len(tasks))
	}
	// Old snapshots expired; the tag, its snapshot and the young ones kept.
	var kept []int64
	for _, s := range tbl.Metadata().Snapshots() {
		kept = append(kept, s.SnapshotID)
		if s.SnapshotID != tagged && !time.UnixMilli(s.TimestampMs).After(boundary) {
			t.Errorf("old snapshot %d survived the expiry", s.SnapshotID)
		}
	}
	if ref, ok := refOf(tbl, "audit"); !ok || ref != tagged {
		t.Errorf("tag audit = %d (present %v), want %d", ref, ok, tagged)
	}
	if !slices.Contains(kept, tagged) {
		t.Errorf("tagged snapshot %d expired", tagged)
	}
	for id := range youngSnaps {
		if !slices.Contains(kept, id) {
			t.Errorf("young snapshot %d expired", id)
		}
	}
	// Orphans: old ones deleted (through the IO's listing), young kept.
	afterFiles := normalizeAll(listFiles(t, fsys, tbl.Location()))
	if !slices.Contains(afterFiles, normalize(youngOrphan)) {
		t.Errorf("young orphan %s deleted; listing %v", youngOrphan, afterFiles)
	}
	for _, p := range oldOrphans {
		if !slices.Contains(beforeFiles, normalize(p)) {
			t.Fatalf("old orphan %s was never listed; listing %v", p, beforeFiles)
		}
		if slices.Contains(afterFiles, normalize(p)) {
			t.Errorf("old orphan %s still there", p)
		}
	}
	// Expired snapshots' files are gone: their manifest lists.
	for _, ml := range oldManifestLists {
		if slices.Contains(afterFiles, normalize(ml)) {
			t.Errorf("manifest list %s of an expired snapshot still there", ml)
		}
	}

	// Converged.
	requireConverged(t, planOnly(ctx, t, cfg, now))
}

// normalize drops the file:// scheme, which local listings omit.
func normalize(p string) string { return strings.TrimPrefix(p, "file://") }

func normalizeAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = normalize(p)
	}
	return out
}

func refOf(tbl *table.Table, name string) (int64, bool) {
	for n, r := range tbl.Metadata().Refs() {
		if n == name {
			return r.SnapshotID, true
		}
	}
	return 0, false
}
