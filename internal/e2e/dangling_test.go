package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// danglingTables are merge-on-read tables: a merge-on-read DELETE writes
// position deletes (v2) or deletion vectors (v3) for every data file, then
// a copy-on-write DELETE of the first insert's rows drops its data files
// whole. Spark's commit leaves the position deletes that named them
// (dangling: danglingCount of them), and removes the deletion vectors with
// their data files (none dangling).
var danglingTables = []foreignTable{
	{name: "mor_v2_dangling", rows: 300 - 43 - (100 - 15), stmts: func(n string) []string {
		return danglingStmts(n, "2")
	}},
	{name: "dv_v3_dangling", rows: 300 - 43 - (100 - 15), meta: []string{"_row_id", "_last_updated_sequence_number"}, stmts: func(n string) []string {
		return danglingStmts(n, "3")
	}},
}

// danglingCount is how many dangling delete files Spark leaves in each of
// danglingTables: one position delete file for each of the dropped insert's
// two data files (one per bucket).
var danglingCount = map[string]int{"mor_v2_dangling": 2, "dv_v3_dangling": 0}

func danglingStmts(n, format string) []string {
	return []string{
		"CREATE TABLE " + n + " " + sparkColumns + " USING iceberg PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='" + format + "', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')",
		"INSERT INTO " + n + " " + sparkRows(0, 100),
		"INSERT INTO " + n + " " + sparkRows(100, 200),
		"INSERT INTO " + n + " " + sparkRows(200, 300),
		"DELETE FROM " + n + " WHERE id % 7 = 0",
		"ALTER TABLE " + n + " SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')",
		"DELETE FROM " + n + " WHERE id < 100",
	}
}

// TestForeignDanglingDeletesRemoved (issue 29, item 8): on Spark's
// merge-on-read tables, a dangling_deletes block plans
// remove_dangling_deletes with the count of the dangling position deletes
// (v2); apply commits one replace snapshot that drops them and nothing else
// (its partly dangling delete manifest rewritten as a delete manifest); on
// the v3 table, where Spark removed the deletion vectors itself, nothing is
// planned and nothing committed. Spark, iceberg-go and DuckDB read the same
// values after as before (Spark's row ids too); every manifest holds files
// of its own spec and content; the next plan is empty.
func TestForeignDanglingDeletesRemoved(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	l := newForeignLake(ctx, t)
	duck := testenv.DuckDBReader(t)
	var stmts []string
	for _, ft := range danglingTables {
		stmts = append(stmts, ft.stmts(l.name(ft.name))...)
	}
	l.sql(ctx, t, stmts...)
	before := l.reads(ctx, t, &duck, danglingTables)
	deletesBefore := map[string]int{}
	snapBefore := map[string]int64{}
	for _, ft := range danglingTables {
		tbl := l.load(ctx, t, ft.name)
		deletesBefore[ft.name] = len(liveDeleteFiles(ctx, t, tbl))
		snapBefore[ft.name] = tbl.CurrentSnapshot().SnapshotID
		if deletesBefore[ft.name] == 0 {
			t.Fatalf("setup: %s has no delete files", ft.name)
		}
	}

	now := time.Now()
	nowFn := func() time.Time { return now }
	cfg := l.config(t, "\n  dangling_deletes {}")
	p, res := planApply(ctx, t, cfg, nowFn, nil)
	requireApplied(t, res)
	for _, ft := range danglingTables {
		tp := findTable(t, p, l.name(ft.name))
		tbl := l.load(ctx, t, ft.name)
		if danglingCount[ft.name] == 0 {
			if len(tp.Actions)+len(tp.Refusals) > 0 || tbl.CurrentSnapshot().SnapshotID != snapBefore[ft.name] {
				t.Errorf("%s: nothing dangles, yet: actions %v refusals %+v, snapshot %d (was %d)", ft.name, actionTypes(tp), tp.Refusals,
					tbl.CurrentSnapshot().SnapshotID, snapBefore[ft.name])
			}
			continue
		}
		a := actionOf(tp, diff.RemoveDanglingDeletes)
		if a == nil || len(tp.Actions) != 1 || len(tp.Refusals) > 0 {
			t.Fatalf("%s: want remove_dangling_deletes alone: actions %v refusals %+v", ft.name, actionTypes(tp), tp.Refusals)
		}
		d := a.DanglingDeletes
		t.Logf("%s: %s; %+v", ft.name, a.Reason, *d)
		if d.DeleteFiles != danglingCount[ft.name] || d.PositionDeletes != d.DeleteFiles || d.ManifestsDropped+d.ManifestsRewritten == 0 ||
			!strings.Contains(a.Reason, "apply to no live data file") {
			t.Errorf("%s: %d of %d delete files planned, want %d: %+v", ft.name, d.DeleteFiles, deletesBefore[ft.name], danglingCount[ft.name], d)
		}
		if got := len(liveDeleteFiles(ctx, t, tbl)); got != deletesBefore[ft.name]-d.DeleteFiles {
			t.Errorf("%s: %d delete files after apply, want %d", ft.name, got, deletesBefore[ft.name]-d.DeleteFiles)
		}
		if s := tbl.CurrentSnapshot(); s.Summary.Operation != table.OpReplace || s.ParentSnapshotID == nil || *s.ParentSnapshotID != snapBefore[ft.name] {
			t.Errorf("%s: the removal committed %+v, want one replace snapshot on %d", ft.name, s, snapBefore[ft.name])
		}
		testkit.RequireManifestsAgree(t, tbl)
		requireReferencedPresent(ctx, t, ft.name, tbl)
	}
	requireSameReads(t, before, l.reads(ctx, t, &duck, danglingTables))
	requireConverged(t, planOnly(ctx, t, cfg, nowFn))
}

// liveDeleteFiles is testkit.LiveDeleteFiles.
func liveDeleteFiles(_ context.Context, t *testing.T, tbl *table.Table) []iceberg.DataFile {
	return testkit.LiveDeleteFiles(t, tbl)
}
