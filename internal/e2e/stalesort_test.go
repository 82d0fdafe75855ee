package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
)

// TestStaleSortOrderRewritten (issue 29, item 7): under strategy "sort" or
// "zorder", files that record another sort order than the rewrite writes
// are compacted although none is small (min_file_size = "1B": no file is a
// size candidate) and each partition holds one file (a lone file is no
// action for size alone). Each step's plan says why, apply keeps every row
// and value (iceberg-go and DuckDB read them), the files then record the
// rewrite's order, and the next plan is empty. The steps: a changed order
// (the files sorted under the first are stale); zorder (files sorted under
// a linear order are stale for it).
func TestStaleSortOrderRewritten(t *testing.T) {
	duck := testenv.DuckDBReader(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	ns := "stale"
	createNamespace(ctx, t, be.cat, ns)
	ident := table.Identifier{ns, "events"}
	addr := catalogName + "." + ns + ".events"
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
	)
	batch := func(first int64) []row {
		var out []row
		for i := range int64(40) {
			id := first + i
			out = append(out, row{id, []string{"eu", "us"}[id%2], (id * 7919) % 101})
		}
		return out
	}
	g := goWrittenTable{name: "events", format: 2, schema: sc,
		spec:    iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}}),
		batches: [][]row{batch(0), batch(100), batch(200)}}
	tbl := g.build(ctx, t, be, ident, strings.TrimPrefix(be.location(ns, "events"), "file://"))
	goFP, err := goFingerprint(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	duckFP, err := duckFingerprint(ctx, duck, tbl)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	nowFn := func() time.Time { return now }
	plan := func(policy string) *diff.TablePlan {
		t.Helper()
		cfg := writeCorpusConfig(t, be, ns, policy, "")
		sess := openSession(cfg, nowFn)
		defer sess.Close()
		p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Now: nowFn, Version: "e2e"})
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		return findTable(t, p, addr)
	}
	// recorded is the sort_order_id every live data file records (-1:
	// none; -2: they disagree).
	recorded := func() int {
		t.Helper()
		tbl, err := be.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := -3
		for _, task := range tasks {
			id := -1
			if p := task.File.SortOrderID(); p != nil {
				id = *p
			}
			if got != -3 && got != id {
				return -2
			}
			got = id
		}
		return got
	}
	// Setup: iceberg-go's appends record no sort_order_id, so a first sort
	// rewrite of the small files (size candidates) gives files that record
	// the order ["v"].
	setup := "\n  target_file_size = \"64MiB\"\n  sort_order = [\"v\"]\n  compaction {\n    strategy        = \"sort\"\n    min_input_files = 2\n  }"
	if _, res := planApply(ctx, t, writeCorpusConfig(t, be, ns, setup, ""), nowFn, nil); tableResult(t, res, addr).Status != apply.StatusDone {
		t.Fatalf("setup: the first sort rewrite: %+v", tableResult(t, res, addr))
	}
	if tp := plan(setup); len(tp.Actions) > 0 {
		t.Fatalf("setup: the plan after the first sort rewrite: %v", actionTypes(tp))
	}
	policy := func(order, compaction string) string {
		return "\n  target_file_size = \"64MiB\"\n" + order + "\n  compaction {\n    min_file_size   = \"1B\"\n    min_input_files = 2\n" + compaction + "  }"
	}
	steps := []struct {
		name, policy string
		want         func(tbl *table.Table) int // the id the files record after apply
	}{
		{"sort_changed", policy(`  sort_order = ["v desc"]`, "    strategy = \"sort\"\n"), func(tbl *table.Table) int { return tbl.SortOrder().OrderID() }},
		{"zorder", policy("", "    strategy       = \"zorder\"\n    zorder_columns = [\"id\", \"v\"]\n"), func(*table.Table) int { return -1 }}, // a zorder rewrite records no order
	}
	for i, st := range steps {
		before := recorded()
		if i == 0 && before <= 0 {
			t.Fatalf("setup: the files record sort_order_id %d, want the order of [\"v\"]", before)
		}
		tp := plan(st.policy)
		a := actionOf(tp, diff.Compact)
		if a == nil || len(tp.Refusals) > 0 {
			t.Fatalf("%s: no compact planned for files recorded under sort order %d: actions %v refusals %v", st.name, before, actionTypes(tp), tp.Refusals)
		}
		stale := 0
		for _, gr := range a.Compact.Groups {
			stale += gr.StaleSortFiles
		}
		if stale != a.Compact.InputFiles || len(a.Compact.Groups) != 2 || !strings.Contains(a.Reason, "files written under another sort order than the rewrite's, taken whatever their size: compaction.strategy = ") {
			t.Fatalf("%s: compact %+v, reason %q: want the 2 partitions' files, all stale, and the reason", st.name, a.Compact, a.Reason)
		}
		cfg := writeCorpusConfig(t, be, ns, st.policy, "")
		_, res := planApply(ctx, t, cfg, nowFn, nil)
		if tr := tableResult(t, res, addr); tr.Error != "" || tr.Status != apply.StatusDone {
			t.Fatalf("%s: apply %s: %s", st.name, tr.Status, tr.Error)
		}
		tbl, err := be.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := recorded(), st.want(tbl); got != want {
			t.Errorf("%s: the files record sort order %d, want %d", st.name, got, want)
		}
		if fp, err := goFingerprint(ctx, tbl); err != nil || !fp.equal(goFP) {
			t.Errorf("%s: iceberg-go reads other rows (%v): %+v, want %+v", st.name, err, fp, goFP)
		}
		if fp, err := duckFingerprint(ctx, duck, tbl); err != nil || !fp.equal(duckFP) {
			t.Errorf("%s: DuckDB reads other rows (%v): %+v, want %+v", st.name, err, fp, duckFP)
		}
		if tp := plan(st.policy); len(tp.Actions) > 0 || len(tp.Refusals) > 0 {
			t.Errorf("%s: the next plan is not empty: actions %v refusals %v", st.name, actionTypes(tp), tp.Refusals)
		}
	}
}
