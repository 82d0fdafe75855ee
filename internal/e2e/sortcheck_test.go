package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// TestCLISortOrderRefusedOnForeignTables: one shared policy, through a
// tables selector, on tables other engines wrote, whose schemas differ
// (issue 14 item 3: a refusal shows in the plan, never first at apply). A
// sort_order that does not fit a table is refused in the plan for
// replace_sort_order and for the sort compaction, with a sentence naming
// the column, its type on that table and what to do; the table's other
// actions apply; apply exits 1 and attempts nothing refused; the next plan
// only repeats the refusals. A sort_order that fits (uuid, time and binary
// columns included) is installed.
func TestCLISortOrderRefusedOnForeignTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	ns := "corpus"
	createNamespace(ctx, t, be.cat, ns)
	type tableCase struct {
		name, corpus, current string
		sortOrder             string // a table block's sort_order; "": the shared policy's ["id"]
		refused               []string
		compacts              bool // the table has files to compact: the sort compaction is refused too
	}
	const trinoAllTypes, trinoCurrent = "iceberg-cxx-trino-all-types", "metadata/00002-6105d5eb-ce39-470c-af78-50b744662ef2.metadata.json"
	cases := []tableCase{
		{name: "all_types", corpus: trinoAllTypes, current: trinoCurrent},
		{name: "all_types_fits", corpus: trinoAllTypes, current: trinoCurrent,
			sortOrder: `["uuid_col", "time_col desc", "bucket(8, binary_col)", "truncate(4, string_col)"]`},
		{name: "all_types_list", corpus: trinoAllTypes, current: trinoCurrent, sortOrder: `["uuid_col", "list_col"]`,
			refused: []string{`column "list_col" has type list<double>, which icewright cannot sort by`}},
		{name: "all_types_day", corpus: trinoAllTypes, current: trinoCurrent, sortOrder: `["time_col", "day(string_col)"]`,
			refused: []string{`"day(string_col) ASC NULLS FIRST": the day transform does not apply to column "string_col" of type string (transforms it takes: identity, bucket, truncate, void)`}},
		{name: "nested", corpus: "duckdb-redpanda-hour-nested", current: "metadata/v1.metadata.json", sortOrder: `["redpanda.timestamp"]`,
			refused: []string{`"redpanda.timestamp" is a field inside column "redpanda" of type struct<...>, and icewright sorts by top-level columns only`}},
		{name: "case_names", corpus: "duckdb-case-sensitive-names", current: "metadata/00001-a7a3a44c-4aac-4619-bebd-11be37b27351.metadata.json", sortOrder: `["USER_ID"]`,
			refused: []string{`column "USER_ID" is not in the table's schema, which has "user_id" and "uSeR_Id": column names are case-sensitive`}},
		{name: "uuid", corpus: "duckdb-uuid", current: "metadata/00001-43fda1f4-1c96-4376-ad16-91beb71d0759.metadata.json", compacts: true,
			refused: []string{`column "id" is not in the table's schema (its columns: "uuid")`}},
		{name: "eq_deletes", corpus: "dremio-java-equality-deletes", current: "metadata/v8.metadata.json", compacts: true,
			refused: []string{`column "id" is not in the table's schema (its columns: "product_id", "name", "category", "color", "created_date", "weight", "quantity")`}},
	}
	var blocks strings.Builder
	snapshotsBefore := map[string]int{}
	for _, c := range cases {
		loc := strings.TrimPrefix(be.fixtureLocation(ns, c.name), "file://")
		md := testkit.CopyTable(t, filepath.Join(corpusDir(t), c.corpus), loc, c.current)
		be.register(ctx, t, table.Identifier{ns, c.name}, "file://"+md)
		tbl, err := be.cat.LoadTable(ctx, table.Identifier{ns, c.name})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		snapshotsBefore[c.name] = len(tbl.Metadata().Snapshots())
		if c.sortOrder != "" {
			fmt.Fprintf(&blocks, "table \"%s.%s.%s\" {\n  policy     = policy.shared\n  sort_order = %s\n}\n", catalogName, ns, c.name, c.sortOrder)
		}
	}
	dir := t.TempDir()
	src := fmt.Sprintf(`catalog %q {
  %s}

policy "shared" {
  sort_order = ["id"]
  properties = {
    "owner" = "icewright-e2e"
  }
  compaction {
    strategy        = "sort"
    min_input_files = 1
  }
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }
}

tables "%s.%s.*" {
  policy = policy.shared
}

%s`, catalogName, be.hcl(catalogName), catalogName, ns, blocks.String())
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := func(name string) string { return catalogName + "." + ns + "." + name }

	// The plan: exit 1 (docs/cli.md: a refusal is an error someone must
	// look at), every refusal in it.
	if r := icewright(ctx, t, dir, "plan", "-detailed-exitcode"); r.code != 1 {
		t.Fatalf("plan -detailed-exitcode = %d, want 1 (refusals)", r.code)
	} else if !strings.Contains(r.stdout, `! refused replace_sort_order: sort_order = ["USER_ID ASC NULLS FIRST"] (main.icewright.hcl:`) {
		t.Errorf("the text plan does not show the refusal")
	}
	first := planJSON(ctx, t, dir)
	for _, c := range cases {
		tp := findTable(t, first, addr(c.name))
		if !slices.Contains(actionTypes(tp), diff.UpdateProperties) {
			t.Errorf("%s: no update_properties beside the refusals: %v", c.name, actionTypes(tp))
		}
		sortWhy := refusalReason(tp, diff.ReplaceSortOrder)
		compactWhy := refusalReason(tp, diff.Compact)
		if len(c.refused) == 0 {
			if !slices.Contains(actionTypes(tp), diff.ReplaceSortOrder) || len(tp.Refusals) > 0 {
				t.Errorf("%s: want replace_sort_order planned: actions %v refusals %v", c.name, actionTypes(tp), tp.Refusals)
			}
			continue
		}
		if slices.Contains(actionTypes(tp), diff.ReplaceSortOrder) || slices.Contains(actionTypes(tp), diff.Compact) {
			t.Errorf("%s: a refused kind is planned: %v", c.name, actionTypes(tp))
		}
		want := `. Fix sort_order, or stop managing the table (remove table "` + addr(c.name) + `")`
		if c.sortOrder == "" {
			want = `. Fix sort_order, or exclude the table from tables "lake.corpus.*" (exclude = ["` + addr(c.name) + `"])`
		}
		for _, part := range c.refused {
			if !strings.Contains(sortWhy, part) || !strings.HasSuffix(sortWhy, want) {
				t.Errorf("%s: replace_sort_order refusal %q, want %q and to end %q", c.name, sortWhy, part, want)
			}
			if c.compacts && !strings.Contains(compactWhy, part) {
				t.Errorf("%s: compact refusal %q, want %q", c.name, compactWhy, part)
			}
		}
		if c.compacts != (compactWhy != "") {
			t.Errorf("%s: compact refusal %q, want one: %v", c.name, compactWhy, c.compacts)
		}
	}

	// apply: exit 1, the other actions done, nothing refused attempted.
	r := icewright(ctx, t, dir, "apply", "-auto-approve", "-json")
	if r.code != 1 {
		t.Fatalf("apply = %d, want 1 (the plan's refusals)", r.code)
	}
	var res apply.Results
	// apply -json is JSON lines; the results document is the last.
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("apply -json: %v", err)
	}
	for _, c := range cases {
		tr := tableResult(t, &res, addr(c.name))
		for _, a := range tr.Actions {
			if a.Status != apply.StatusDone && a.Status != apply.StatusSkipped {
				t.Errorf("%s: %s %s: %s", c.name, a.Type, a.Status, a.Error)
			}
			if len(c.refused) > 0 && (a.Type == diff.ReplaceSortOrder || a.Type == diff.Compact) {
				t.Errorf("%s: apply attempted refused %s (%s)", c.name, a.Type, a.Status)
			}
		}
		// A refusal is no failure of what ran: the table is done (its
		// other actions), its refusals said (and the apply exits 1).
		if refused := len(c.refused) > 0; tr.Status != apply.StatusDone || refused != strings.HasPrefix(tr.Refused(), "the plan refused actions: ") {
			t.Errorf("%s: status %s (%s), refused %q; want done, refused only with the plan's refusals", c.name, tr.Status, tr.Error, tr.Refused())
		}
		tbl, err := be.cat.LoadTable(ctx, table.Identifier{ns, c.name})
		if err != nil {
			t.Fatal(err)
		}
		if got := tbl.Properties()["owner"]; got != "icewright-e2e" {
			t.Errorf("%s: property owner = %q: update_properties did not apply", c.name, got)
		}
		if n := len(tbl.Metadata().Snapshots()); snapshotsBefore[c.name] > 1 && n >= snapshotsBefore[c.name] {
			t.Errorf("%s: %d snapshots after apply, %d before: expire_snapshots did not apply", c.name, n, snapshotsBefore[c.name])
		}
		if sorted := !tbl.SortOrder().IsUnsorted(); sorted != (len(c.refused) == 0) {
			t.Errorf("%s: sort order after apply %s", c.name, tbl.SortOrder())
		}
	}

	// The next plan: no action anywhere, the same refusals, exit 1.
	second := planJSON(ctx, t, dir)
	for _, tp := range second.Tables {
		if len(tp.Actions) > 0 {
			t.Errorf("%s: the second plan has %v", tp.Address, actionTypes(&tp))
		}
	}
	if !slices.Equal(first.Refusals, second.Refusals) {
		t.Errorf("the second plan's refusals differ:\n first  %v\n second %v", first.Refusals, second.Refusals)
	}
	if r := icewright(ctx, t, dir, "plan", "-detailed-exitcode"); r.code != 1 {
		t.Fatalf("second plan -detailed-exitcode = %d, want 1 (the refusals)", r.code)
	}
}

// planJSON runs plan -json in dir and decodes the document.
func planJSON(ctx context.Context, t testing.TB, dir string) *diff.Plan {
	t.Helper()
	r := icewright(ctx, t, dir, "plan", "-json")
	var p diff.Plan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("plan -json (exit %d): %v", r.code, err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("tables not planned: %v", p.Errors)
	}
	return &p
}

func refusalReason(tp *diff.TablePlan, typ diff.ActionType) string {
	for _, r := range tp.Refusals {
		if r.Action == string(typ) {
			return r.Reason
		}
	}
	return ""
}

func tableResult(t testing.TB, res *apply.Results, addr string) apply.TableResult {
	t.Helper()
	for _, tr := range res.Tables {
		if tr.Address == addr {
			return tr
		}
	}
	t.Fatalf("no result for %s", addr)
	return apply.TableResult{}
}
