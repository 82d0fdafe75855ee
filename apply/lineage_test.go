package apply

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// TestV3WithoutRowIDsRefusedInPlan: a table upgraded to format v3 with no
// commit since has data files without first_row_id. Without a manifests
// block (whose rewrite would assign the ids first) the plan refuses their
// compaction (with what to do about it) instead of apply discovering it,
// and the table's expiry and orphan sweep still run.
func TestV3WithoutRowIDsRefusedInPlan(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + strings.Replace(policyHCL, "manifests {\n    max_count = 3\n  }", "", 1))
	tbl := upgradedToV3(ctx, t, e)
	stray := strayFile(t, tbl, "stray.parquet", 5*24*time.Hour)
	rows := testkit.ScanIDs(t, tbl)

	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	if actionOf(tp, diff.Compact) != nil {
		t.Fatalf("plan compacts files without first_row_id: %+v", tp.Actions)
	}
	var refusal string
	for _, r := range tp.Refusals {
		if r.Action == string(diff.Compact) {
			refusal = r.Reason
		}
	}
	if !strings.Contains(refusal, "no first_row_id") || !strings.Contains(refusal, "row lineage") || !strings.Contains(refusal, "manifests block") {
		t.Fatalf("plan does not refuse the compaction with the reason: %+v", tp.Refusals)
	}
	if actionOf(tp, diff.ExpireSnapshots) == nil || actionOf(tp, diff.RemoveOrphanFiles) == nil {
		t.Fatalf("plan lost the other actions: %+v", tp.Actions)
	}

	res := e.apply(p, false)
	tr := tableResult(t, res, "lake."+orders)
	// The refusal is said and exits 1 (Results.Failed); it is no failure
	// of the actions that ran, which count the table changed (issue 43).
	if tr.Status != StatusDone || !strings.Contains(tr.Refused(), "no first_row_id") || !res.Failed() || res.HasFailure() ||
		res.Summary.TablesFailed != 0 || res.Summary.TablesRefused != 1 || res.Summary.TablesChanged != 1 {
		t.Fatalf("want the table done and changed, its refusal said, the apply exiting 1:\n%s", describe(res))
	}
	for _, a := range tr.Actions {
		if (a.Type == diff.ExpireSnapshots || a.Type == diff.RemoveOrphanFiles) && a.Status != StatusDone {
			t.Fatalf("%s did not run:\n%s", a.Type, describe(res))
		}
	}
	after := e.lake.Reload(t, orders)
	got := testkit.ScanIDs(t, after)
	if len(got) != len(rows) {
		t.Fatalf("rows changed: %d ids before, %d after", len(rows), len(got))
	}
	for id, n := range rows {
		if got[id] != n {
			t.Fatalf("id %d: %d rows before, %d after", id, n, got[id])
		}
	}
	if testkit.FilesUnder(t, after)[stray] {
		t.Fatalf("orphan %s was not removed", stray)
	}
	checkReferencedExist(t, after)
}

// TestV3WithoutRowIDsCompactedInOneApply: with a manifests block, the same
// table is compacted in the same apply: the executor first commits a
// manifest rewrite, whose v3 manifest list assigns the files' first_row_id,
// then rewrites the files keeping each row's _row_id and
// _last_updated_sequence_number as that rewrite assigned them; the next
// plan has nothing to compact. The plan refused the compaction and the
// next one offered it (issue 32, item 4).
func TestV3WithoutRowIDsCompactedInOneApply(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "")
	tbl := upgradedToV3(ctx, t, e)
	upgraded := tbl.CurrentSnapshot().SnapshotID
	rows := testkit.ScanIDs(t, tbl)

	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	c := actionOf(tp, diff.Compact)
	if c == nil || !c.Compact.AssignRowIDs || len(tp.Refusals) > 0 {
		t.Fatalf("want a compaction that assigns row ids first, no refusal: %+v %+v", tp.Actions, tp.Refusals)
	}
	res := e.apply(p, false)
	if tr := tableResult(t, res, "lake."+orders); tr.Status != StatusDone {
		t.Fatalf("apply:\n%s", describe(res))
	}
	after := e.lake.Reload(t, orders)
	got := testkit.ScanIDs(t, after)
	if len(got) != len(rows) {
		t.Fatalf("rows changed: %d ids before, %d after", len(rows), len(got))
	}
	for id, n := range rows {
		if got[id] != n {
			t.Fatalf("id %d: %d rows before, %d after", id, n, got[id])
		}
	}
	// The snapshot after the upgraded one is the manifest rewrite: the
	// rows' lineage as it assigned it is what the compaction must keep.
	var assigned int64
	for _, s := range after.Metadata().Snapshots() {
		if s.ParentSnapshotID != nil && *s.ParentSnapshotID == upgraded {
			assigned = s.SnapshotID
		}
	}
	if assigned == 0 {
		t.Fatal("no snapshot after the upgraded one")
	}
	want, have := rowLineage(t, after, &assigned), rowLineage(t, after, nil)
	if len(want) != len(have) || len(want) == 0 {
		t.Fatalf("%d rows with lineage after the manifest rewrite, %d after the compaction", len(want), len(have))
	}
	for rowID, w := range want {
		if have[rowID] != w {
			t.Fatalf("_row_id %d: %v after the manifest rewrite, %v after the compaction", rowID, w, have[rowID])
		}
	}
	if c := actionOf(tablePlan(t, e.plan(), "lake."+orders), diff.Compact); c != nil {
		t.Fatalf("the next plan compacts again: %+v", c.Compact)
	}
	checkReferencedExist(t, after)
}

// upgradedToV3 is the debt table upgraded to format v3 with no commit
// since: its data files have no first_row_id.
func upgradedToV3(ctx context.Context, t *testing.T, e *env) *table.Table {
	t.Helper()
	txn := e.debtTable(orders, nil).NewTransaction()
	if err := txn.UpgradeFormatVersion(3); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rowLineage maps each live row's _row_id to its event_id and
// _last_updated_sequence_number, at snapshot (nil: the current one). A row
// without lineage fails the test.
func rowLineage(t *testing.T, tbl *table.Table, snapshot *int64) map[int64]string {
	t.Helper()
	opts := []table.ScanOption{table.WithRowLineage(), table.WithSelectedFields("event_id", iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName)}
	if snapshot != nil {
		opts = append(opts, table.WithSnapshotID(*snapshot))
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, rowIDs, seqs := col("event_id"), col(iceberg.RowIDColumnName).(*array.Int64), col(iceberg.LastUpdatedSequenceNumberColumnName)
		for i := range rowIDs.Len() {
			if rowIDs.IsNull(i) || seqs.IsNull(i) {
				t.Fatalf("row %s has no lineage", ids.ValueStr(i))
			}
			out[rowIDs.Value(i)] = ids.ValueStr(i) + "@" + seqs.ValueStr(i)
		}
		rec.Release()
	}
	return out
}

// recordingEngine runs the session's own executors and keeps what each
// compaction said it committed (ExecResult.Snapshots): what the same
// apply's expiry is told are its own snapshots (expiry.KeepLive).
type recordingEngine struct {
	*providers.Session
	mu        sync.Mutex
	snapshots []int64
}

func (e *recordingEngine) Executor(t diff.ActionType) (providers.Executor, bool) {
	inner, ok := e.Session.Executor(t)
	if !ok || t != diff.Compact {
		return inner, ok
	}
	return providers.ExecutorFunc(func(ctx context.Context, req providers.ExecRequest) (*providers.Table, providers.ExecResult, error) {
		next, er, err := inner.Execute(ctx, req)
		e.mu.Lock()
		e.snapshots = append(e.snapshots, er.Snapshots...)
		e.mu.Unlock()
		return next, er, err
	}), true
}

// TestAssignRowIDsReportsBothCommits: a compaction that first commits a
// manifest rewrite (to assign row ids) reports both snapshots it committed,
// so the same apply's expiry knows every snapshot since the table it began
// with is its own (one missing makes it take another writer's commit for
// granted and re-read the whole table's live files).
func TestAssignRowIDsReportsBothCommits(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "")
	tbl := upgradedToV3(ctx, t, e)
	upgraded := tbl.CurrentSnapshot().SnapshotID
	p := e.plan()
	if c := actionOf(tablePlan(t, p, "lake."+orders), diff.Compact); c == nil || !c.Compact.AssignRowIDs {
		t.Fatalf("want a compaction that assigns row ids first: %+v", tablePlan(t, p, "lake."+orders).Actions)
	}
	rec := &recordingEngine{Session: e.sess}
	res, err := run(ctx, e.cfg, rec, p, ApplyOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tableResult(t, res, "lake."+orders); tr.Status != StatusDone {
		t.Fatalf("apply:\n%s", describe(res))
	}
	// Every snapshot on main after the upgraded one, up to the
	// compaction's rewrite, is one the compaction committed (a manifests
	// action of the same apply may add one after it).
	after := e.lake.Reload(t, orders).Metadata()
	var want []int64
	for s := after.SnapshotByName(table.MainBranch); s != nil && s.SnapshotID != upgraded && s.ParentSnapshotID != nil; s = after.SnapshotByID(*s.ParentSnapshotID) {
		if len(want) > 0 || s.Summary != nil && s.Summary.Properties["icewright.action"] == "compact" {
			want = append(want, s.SnapshotID)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(rec.snapshots))
	if len(want) < 2 || !slices.Equal(got, want) {
		t.Fatalf("compaction reported snapshots %v, committed %v (the manifest rewrite and the rewrite)", got, want)
	}
}
