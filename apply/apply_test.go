package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/diff/planfile"
	"github.com/icewright/icewright/providers/testkit"
)

// TestEndToEndConverges: plan, apply, plan again shows nothing; rows are
// preserved exactly (full scan); a second apply writes no metadata.
func TestEndToEndConverges(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	stray := strayFile(t, tbl, "old-stray.parquet", 10*24*time.Hour)
	young := strayFile(t, tbl, "young-stray.parquet", time.Hour)
	idsBefore := testkit.ScanIDs(t, tbl)
	if len(idsBefore) != 11*40 {
		t.Fatalf("setup: %d rows", len(idsBefore))
	}

	p := e.plan()
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors: %v", p.Errors)
	}
	tp := tablePlan(t, p, "lake."+orders)
	for _, typ := range []diff.ActionType{diff.UpdateProperties, diff.Compact, diff.RewriteManifests, diff.ExpireSnapshots, diff.RemoveOrphanFiles} {
		if actionOf(tp, typ) == nil {
			t.Fatalf("plan lacks %s: %+v", typ, tp.Actions)
		}
	}
	if got := actionOf(tp, diff.RemoveOrphanFiles).Orphans.Paths; !slices.Contains(got, stray) || slices.Contains(got, young) {
		t.Fatalf("orphan paths %v", got)
	}

	var mu sync.Mutex
	var events []Event
	res, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Version: "test", Progress: func(ev Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("apply failed:\n%s", describe(res))
	}
	tr := tableResult(t, res, "lake."+orders)
	if tr.Replanned {
		t.Fatal("an unchanged table was re-planned")
	}
	for _, a := range tr.Actions {
		if a.Status != StatusDone {
			t.Fatalf("%s: %s\n%s", a.Type, a.Status, describe(res))
		}
	}
	if res.Summary.FilesDeleted == 0 || res.Summary.Snapshots == 0 {
		t.Fatalf("summary %+v", res.Summary)
	}
	// The plan's expiry figure may only under-count what apply deletes.
	est := actionOf(tp, diff.ExpireSnapshots).Expire
	for _, a := range tr.Actions {
		if a.Type == diff.ExpireSnapshots {
			t.Logf("expiry: plan said %d files / %d bytes, apply deleted %d / %d", est.FilesToDelete, est.BytesToDelete, a.FilesDeleted, a.BytesFreed)
			if est.FilesToDelete == 0 || est.FilesToDelete > a.FilesDeleted {
				t.Fatalf("plan estimated %d files, apply deleted %d", est.FilesToDelete, a.FilesDeleted)
			}
		}
	}
	if len(events) == 0 {
		t.Fatal("no progress events")
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatal("old stray survived")
	}
	if _, err := os.Stat(young); err != nil {
		t.Fatal("young stray deleted")
	}

	after := e.lake.Reload(t, orders)
	if got := testkit.ScanIDs(t, after); !mapsEqual(got, idsBefore) {
		t.Fatalf("rows changed: %d ids before, %d after", len(idsBefore), len(got))
	}
	checkReferencedExist(t, after)

	p2 := e.plan()
	if p2.Summary.Actions != 0 || len(p2.Errors) != 0 {
		t.Fatalf("second plan not empty: %+v %+v", p2.Summary, tablePlan(t, p2, "lake."+orders).Actions)
	}
	if p2.Summary.TablesInPolicy != 1 {
		t.Fatalf("summary %+v", p2.Summary)
	}
	res2 := e.apply(p2, false)
	if res2.Failed() || e.lake.Reload(t, orders).MetadataLocation() != after.MetadataLocation() {
		t.Fatalf("applying an empty plan changed the table:\n%s", describe(res2))
	}
}

func mapsEqual(a, b map[int64]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSavedPlanBounds: between plan and apply a writer appends and a new
// old stray file appears. The stray survives, the appended rows are present,
// and nothing the plan did not list is deleted.
func TestSavedPlanBounds(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	listed := strayFile(t, tbl, "listed.parquet", 10*24*time.Hour)
	p := roundTrip(t, e.plan())
	tp := tablePlan(t, p, "lake."+orders)
	exp := actionOf(tp, diff.ExpireSnapshots)
	if exp == nil || actionOf(tp, diff.RemoveOrphanFiles) == nil {
		t.Fatalf("plan: %+v", tp.Actions)
	}
	planned := e.lake.Reload(t, orders)
	allowed := filesOfSnapshots(t, planned, exp.Expire.SnapshotIDs)
	allowed[listed] = true

	// Meanwhile: a writer appends, and a stray the plan never saw appears.
	cur, err := appendEvents(context.Background(), planned, 1_000_000, 25)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := testkit.ScanIDs(t, cur)
	late := strayFile(t, cur, "late-stray.parquet", 10*24*time.Hour)
	before := testkit.FilesUnder(t, cur)

	res := e.apply(p, true)
	tr := tableResult(t, res, "lake."+orders)
	if !tr.Replanned {
		t.Fatalf("changed table not re-planned:\n%s", describe(res))
	}
	if res.Failed() {
		t.Fatalf("apply failed:\n%s", describe(res))
	}
	if _, err := os.Stat(late); err != nil {
		t.Fatal("a stray the plan did not list was deleted")
	}
	if _, err := os.Stat(listed); !os.IsNotExist(err) {
		t.Fatal("the listed stray survived")
	}
	after := e.lake.Reload(t, orders)
	now := testkit.FilesUnder(t, after)
	for p := range before {
		if !now[p] && !allowed[p] {
			t.Errorf("deleted %s, which the plan did not show", p)
		}
	}
	if got := testkit.ScanIDs(t, after); !mapsEqual(got, wantIDs) {
		t.Fatalf("rows: %d, want %d", len(got), len(wantIDs))
	}
	for _, id := range []int64{1_000_000, 1_000_024} {
		if testkit.ScanIDs(t, after)[id] != 1 {
			t.Fatalf("appended row %d missing", id)
		}
	}
	// The young snapshot the writer added is not expired: the plan did not
	// list it.
	if after.SnapshotByID(cur.CurrentSnapshot().SnapshotID) == nil {
		t.Fatal("the writer's snapshot was expired")
	}
	checkReferencedExist(t, after)
}

func roundTrip(t *testing.T, p *diff.Plan) *diff.Plan {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := planfile.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode own plan: %v", err)
	}
	return q
}

// TestConcurrentWriter: a writer appends in a loop (through its own catalog
// connection) while apply runs. Every row it committed is present after.
func TestConcurrentWriter(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	writerLake := testkit.NewLakehouse(t, e.lake.Dir, "lake") // second connection to the same catalog

	ctx, stop := context.WithCancel(context.Background())
	var (
		wg        sync.WaitGroup
		committed []int64
		failures  int
		lastErr   error
	)
	// The writer must be committing while apply runs; on a loaded machine
	// apply can finish before the writer's first commit lands, so apply
	// starts only after that first commit (the table then also differs
	// from the plan: the re-plan path runs beside the writer).
	firstCommit := make(chan struct{})
	var once sync.Once
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := int64(2_000_000)
		for ctx.Err() == nil {
			tbl, err := writerLake.Catalog.LoadTable(context.Background(), testkit.Ident(orders))
			if err == nil {
				_, err = appendEvents(context.Background(), tbl, next, 5)
			}
			if err == nil {
				for i := range int64(5) {
					committed = append(committed, next+i)
				}
				once.Do(func() { close(firstCommit) })
			} else {
				failures++
				lastErr = err
			}
			next += 5
			time.Sleep(30 * time.Millisecond)
		}
	}()
	select {
	case <-firstCommit:
	case <-time.After(30 * time.Second):
		stop()
		wg.Wait()
		t.Fatalf("the writer could not commit once in 30s (%d failures, last error %v)", failures, lastErr)
	}
	res := e.apply(p, false)
	stop()
	wg.Wait()
	t.Logf("writer committed %d rows (%d failed appends, last error %v); apply:\n%s", len(committed), failures, lastErr, describe(res))
	if len(committed) == 0 {
		t.Fatal("the writer never committed: the test proves nothing")
	}
	after := e.lake.Reload(t, orders)
	ids := testkit.ScanIDs(t, after)
	for _, id := range committed {
		if ids[id] != 1 {
			t.Fatalf("row %d committed by the writer is missing (count %d)", id, ids[id])
		}
	}
	for id := range int64(11 * 40) {
		if ids[id] != 1 {
			t.Fatalf("original row %d missing", id)
		}
	}
	checkReferencedExist(t, after)
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			for _, k := range a.StagedFilesKept {
				t.Errorf("staged file kept after a definite conflict: %s", k)
			}
		}
	}
}

// TestGCDisabledAfterPlanRefusesDeletes: the plan was made with gc enabled;
// gc.enabled=false arrives before apply. Nothing is expired or deleted.
func TestGCDisabledAfterPlanRefusesDeletes(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	stray := strayFile(t, tbl, "stray.parquet", 10*24*time.Hour)
	p := e.plan()
	if actionOf(tablePlan(t, p, "lake."+orders), diff.ExpireSnapshots) == nil {
		t.Fatal("no expiry planned")
	}
	txn := e.lake.Reload(t, orders).NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"gc.enabled": "false"}); err != nil {
		t.Fatal(err)
	}
	cur, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snaps := len(cur.Metadata().Snapshots())
	res := e.apply(p, true)
	if !res.Failed() {
		t.Fatalf("apply with gc.enabled=false did not fail:\n%s", describe(res))
	}
	after := e.lake.Reload(t, orders)
	if len(after.Metadata().Snapshots()) < snaps {
		t.Fatal("snapshots expired despite gc.enabled=false")
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatal("orphan deleted despite gc.enabled=false")
	}
	checkReferencedExist(t, after)
}

// TestGCDisabledExactPathRefused: gc.enabled=false set in a way the plan
// did not see (forced into an approved plan) is refused by execution too.
func TestGCDisabledPlanRefuses(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, map[string]string{"gc.enabled": "false"})
	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if actionOf(tp, diff.ExpireSnapshots) != nil || actionOf(tp, diff.RemoveOrphanFiles) != nil || len(tp.Refusals) == 0 {
		t.Fatalf("plan with gc.enabled=false: actions %+v refusals %+v", tp.Actions, tp.Refusals)
	}
	before := testkit.FilesUnder(t, e.lake.Reload(t, orders))
	res := e.apply(p, false)
	if !res.Failed() {
		t.Fatal("a plan with refusals applied without error")
	}
	after := testkit.FilesUnder(t, e.lake.Reload(t, orders))
	for f := range before {
		if !after[f] && !strings.Contains(f, "/data/") {
			t.Errorf("%s deleted", f)
		}
	}
	for f := range before {
		if !after[f] {
			t.Fatalf("%s deleted with gc.enabled=false", f)
		}
	}
}

func TestStaleConfigRefused(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	loc := e.lake.Reload(t, orders).MetadataLocation()
	e.writeConfig(e.lake.HCL() + strings.Replace(policyHCL, `max_age       = "2d"`, `max_age       = "1d"`, 1))
	_, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Saved: true})
	if !errors.Is(err, ErrStalePlan) {
		t.Fatalf("want ErrStalePlan, got %v", err)
	}
	if e.lake.Reload(t, orders).MetadataLocation() != loc {
		t.Fatal("table changed by a refused apply")
	}
}

func TestRecreatedTableRefused(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	e.debtTable("sales.returns", nil)
	p := e.plan()
	other := e.lake.Reload(t, "sales.returns").MetadataLocation()
	if err := e.lake.Catalog.DropTable(context.Background(), testkit.Ident(orders)); err != nil {
		t.Fatal(err)
	}
	e.debtTable(orders, nil)
	recreated := e.lake.Reload(t, orders).MetadataLocation()
	_, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Saved: true})
	if !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), "recreated") {
		t.Fatalf("want ErrStalePlan for the recreated table, got %v", err)
	}
	if e.lake.Reload(t, "sales.returns").MetadataLocation() != other || e.lake.Reload(t, orders).MetadataLocation() != recreated {
		t.Fatal("a refused apply changed a table")
	}
}

func TestPlanErrorsAreIsolated(t *testing.T) {
	e := newEnv(t, `
table "lake.sales.missing" {
  policy = policy.base
}
catalog "down" {
  type = "sql"
  uri  = "sqlite:/nonexistent/dir/x.db"
}
table "down.a.b" {
  policy = policy.base
}
`)
	e.debtTable(orders, nil)
	p := e.plan()
	tablePlan(t, p, "lake."+orders)
	var addrs []string
	for _, er := range p.Errors {
		addrs = append(addrs, er.Address)
	}
	if !slices.Contains(addrs, "lake.sales.missing") || !slices.Contains(addrs, "down.a.b") {
		t.Fatalf("errors %v", p.Errors)
	}
	if p.Summary.Errors < 2 || p.Summary.TablesChanged != 1 {
		t.Fatalf("summary %+v", p.Summary)
	}
	// Applying it changes the plannable table and still fails (exit 1),
	// naming the tables that could not be planned.
	res := e.apply(p, false)
	if !res.Failed() {
		t.Fatal("apply of a plan with errors did not fail")
	}
	// (Its orphan sweep is refused while another catalog is unreachable:
	// providers cannot rule out a nested table.)
	for _, a := range tableResult(t, res, "lake."+orders).Actions {
		if a.Status != StatusDone {
			t.Fatalf("the healthy table was not applied:\n%s", describe(res))
		}
	}
	if tr := tableResult(t, res, "down.a.b"); tr.Status != StatusFailed || !strings.Contains(tr.Error, "not planned") {
		t.Fatalf("unplannable table: %+v", tr)
	}
}

func TestTargets(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	e.debtTable("sales.returns", nil)
	p, err := Plan(context.Background(), e.cfg, e.sess, PlanOptions{Targets: []string{"lake.sales.ret*"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tables) != 1 || p.Tables[0].Address != "lake.sales.returns" {
		t.Fatalf("targeted plan has %d tables", len(p.Tables))
	}
}

// TestInterruptedApplyStartsNothing: a cancelled context starts no table.
func TestInterruptedApplyStartsNothing(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	loc := e.lake.Reload(t, orders).MetadataLocation()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Apply(ctx, e.cfg, e.sess, p, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatal("not reported as interrupted")
	}
	if e.lake.Reload(t, orders).MetadataLocation() != loc {
		t.Fatal("cancelled apply changed the table")
	}
}

// TestCancelMidApply: Ctrl-C after the first action lets it finish, starts
// nothing more, and reports what was done; the table stays whole.
func TestCancelMidApply(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	ids := testkit.ScanIDs(t, e.lake.Reload(t, orders))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Apply(ctx, e.cfg, e.sess, p, ApplyOptions{Progress: func(ev Event) {
		if ev.Action == string(diff.UpdateProperties) && ev.Phase == PhaseDone {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr := tableResult(t, res, "lake."+orders)
	if !res.Interrupted || tr.Status != StatusInterrupted || !strings.Contains(tr.Error, "interrupted") {
		t.Fatalf("not reported as interrupted:\n%s", describe(res))
	}
	if tr.Actions[0].Type != diff.UpdateProperties || tr.Actions[0].Status != StatusDone {
		t.Fatalf("first action not done:\n%s", describe(res))
	}
	for _, a := range tr.Actions[1:] {
		if a.Status != StatusSkipped {
			t.Fatalf("%s ran after the interrupt:\n%s", a.Type, describe(res))
		}
	}
	after := e.lake.Reload(t, orders)
	if after.Properties()["write.parquet.compression-codec"] != "zstd" {
		t.Fatal("the finished action is not in the table")
	}
	if !mapsEqual(testkit.ScanIDs(t, after), ids) {
		t.Fatal("rows changed")
	}
	checkReferencedExist(t, after)
}

// TestReapplySavedPlanWritesNothing: running the same saved plan a second
// time (a CD retry) writes no metadata and deletes nothing.
func TestReapplySavedPlanWritesNothing(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	strayFile(t, tbl, "stray.parquet", 10*24*time.Hour)
	p := roundTrip(t, e.plan())
	if res := e.apply(p, true); res.Failed() {
		t.Fatalf("first apply:\n%s", describe(res))
	}
	after := e.lake.Reload(t, orders)
	files := testkit.FilesUnder(t, after)
	res := e.apply(p, true)
	if res.Failed() {
		t.Fatalf("second apply failed:\n%s", describe(res))
	}
	if res.Summary.ActionsDone != 0 || res.Summary.FilesDeleted != 0 {
		t.Fatalf("second apply did something:\n%s", describe(res))
	}
	again := e.lake.Reload(t, orders)
	if again.MetadataLocation() != after.MetadataLocation() {
		t.Fatal("second apply wrote metadata")
	}
	now := testkit.FilesUnder(t, again)
	if len(now) != len(files) {
		t.Fatalf("%d files before the second apply, %d after", len(files), len(now))
	}
}

// TestSavedPlanSnapshotTaggedMeanwhile: a snapshot the plan listed for
// expiry gets a tag before apply. It must survive, and its rows stay
// readable.
func TestSavedPlanSnapshotTaggedMeanwhile(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := roundTrip(t, e.plan())
	exp := actionOf(tablePlan(t, p, "lake."+orders), diff.ExpireSnapshots)
	if exp == nil || len(exp.Expire.SnapshotIDs) < 2 {
		t.Fatalf("plan: %+v", exp)
	}
	tagged := exp.Expire.SnapshotIDs[1]
	if _, _, err := e.lake.Catalog.CommitTable(context.Background(), testkit.Ident(orders), nil, []table.Update{
		table.NewSetSnapshotRefUpdate("audit", tagged, table.TagRef, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	res := e.apply(p, true)
	after := e.lake.Reload(t, orders)
	if after.SnapshotByID(tagged) == nil {
		t.Fatalf("tagged snapshot %d expired:\n%s", tagged, describe(res))
	}
	if n := testkit.ScanRows(t, mustScanAt(t, after, tagged)); n == 0 {
		t.Fatal("the tagged snapshot reads no rows")
	}
	checkReferencedExist(t, after)
	for _, id := range exp.Expire.SnapshotIDs {
		if id != tagged && after.SnapshotByID(id) != nil {
			t.Errorf("snapshot %d (listed, untagged) was not expired:\n%s", id, describe(res))
		}
	}
}

// mustScanAt returns a table whose current snapshot is id (for ScanRows).
func mustScanAt(t *testing.T, tbl *table.Table, id int64) *table.Table {
	t.Helper()
	meta := tbl.Metadata()
	b, err := table.MetadataBuilderFromBase(meta, tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetSnapshotRef(table.MainBranch, id, table.BranchRef); err != nil {
		t.Fatal(err)
	}
	m, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return table.New(tbl.Identifier(), m, tbl.MetadataLocation(), tbl.FS, nil)
}

// TestSavedPlanOrphanAdoptedMeanwhile: a stray file the plan listed as an
// orphan is added to the table (AddFiles) before apply. It is referenced
// now and must not be deleted.
func TestSavedPlanOrphanAdoptedMeanwhile(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	// A real Parquet file of this table's schema, copied to a new name and
	// made old: an orphan by every rule.
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src := strings.TrimPrefix(tasks[0].File.FilePath(), "file://")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	stray := strayFile(t, tbl, "adopted.parquet", 10*24*time.Hour)
	if err := os.WriteFile(stray, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(stray, old, old); err != nil {
		t.Fatal(err)
	}
	p := roundTrip(t, e.plan())
	orph := actionOf(tablePlan(t, p, "lake."+orders), diff.RemoveOrphanFiles)
	if orph == nil || !slices.Contains(orph.Orphans.Paths, stray) {
		t.Fatalf("the stray is not planned as an orphan: %+v", orph)
	}
	// A writer adopts the file.
	cur := e.lake.Reload(t, orders)
	txn := cur.NewTransaction()
	if err := txn.AddFiles(context.Background(), []string{stray}, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows := testkit.ScanRows(t, e.lake.Reload(t, orders))

	res := e.apply(p, true)
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("the adopted file was deleted:\n%s", describe(res))
	}
	after := e.lake.Reload(t, orders)
	checkReferencedExist(t, after)
	if got := testkit.ScanRows(t, after); got != wantRows {
		t.Fatalf("rows %d, want %d", got, wantRows)
	}
}

// TestSparkFixturesPlanApplyConverge: tables written by Spark/Java Iceberg
// (v1 partitioned, v2 with an overwrite, v2 with two appends, Hadoop .crc
// side files) go through plan, apply and a second plan that is empty, with
// every row preserved and every referenced file in place.
func TestSparkFixturesPlanApplyConverge(t *testing.T) {
	e := newEnv(t, "")
	names := map[string]string{}
	for i, fx := range testkit.Fixtures {
		name := fmt.Sprintf("sales.fixture%d", i)
		tbl := e.lake.AddFixture(t, fx, name)
		names[name] = fx
		// Old history so that expiry has something to do on Java metadata.
		e.lake.Backdate(t, tbl, 30*24*time.Hour)
	}
	counts := map[string]int64{}
	for name := range names {
		counts[name] = testkit.ScanRows(t, e.lake.Reload(t, name))
	}
	p := e.plan()
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors: %v", p.Errors)
	}
	res := e.apply(p, false)
	if res.Failed() {
		t.Fatalf("apply failed:\n%s", describe(res))
	}
	t.Logf("apply:\n%s", describe(res))
	for name, fx := range names {
		tbl := e.lake.Reload(t, name)
		if got := testkit.ScanRows(t, tbl); got != counts[name] {
			t.Fatalf("%s (%s): %d rows after apply, %d before", name, fx, got, counts[name])
		}
		checkReferencedExist(t, tbl)
	}
	p2 := e.plan()
	if p2.Summary.Actions != 0 || len(p2.Errors) != 0 {
		for _, tp := range p2.Tables {
			if len(tp.Actions) > 0 {
				t.Errorf("%s still has %d actions (first %s)", tp.Address, len(tp.Actions), tp.Actions[0].Type)
			}
		}
		t.Fatalf("second plan not empty: %+v %v", p2.Summary, p2.Errors)
	}
}
