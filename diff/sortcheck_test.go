package diff

import (
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// Sort and zorder columns are checked against the observed schema when
// planning (issue 14, item 3: a refusal shows in the plan, never first at
// apply). What icewright's engine can order a column by is data providers fill
// from the engine (Column.SortTransforms); these states spell it out as the
// engine does for each type.

var (
	timeTransforms   = []string{"identity", "bucket", "year", "month", "day", "hour", "void"}
	stringTransforms = []string{"identity", "bucket", "truncate", "void"}
	floatTransforms  = []string{"identity", "void"}
)

// sortSchema is a table that other engines wrote: two columns whose names
// differ only in case, a struct, a list and a geometry column.
func sortSchema() []Column {
	return []Column{
		{ID: 1, Name: "event_ts", Type: "timestamptz", SortTransforms: timeTransforms},
		{ID: 2, Name: "user_id", Type: "long", SortTransforms: stringTransforms},
		{ID: 3, Name: "uSeR_Id", Type: "string", SortTransforms: stringTransforms},
		{ID: 4, Name: "name", Type: "string", SortTransforms: stringTransforms},
		{ID: 5, Name: "score", Type: "double", SortTransforms: floatTransforms},
		{ID: 6, Name: "payload", Type: "struct<7: ts: optional timestamptz, 8: source: optional string, 9: attributes: optional map<string, string>>"},
		{ID: 10, Name: "tags", Type: "list<string>"},
		{ID: 12, Name: "area", Type: "geometry(OGC:CRS84)"},
	}
}

// sortCheckTable has old snapshots (expiry is planned), two small files
// (compaction is planned) and properties to set: the other actions that
// must survive a refused sort order.
func sortCheckTable() *TableState {
	st := linear(40*day, 30*day, 1*day)
	st.Schema = sortSchema()
	st.Partitions = []PartitionStats{{DataFiles: 2, DataBytes: 20, Records: 2, SmallFiles: 2, CandidateSizes: []int64{10, 10}, CandidateBytes: 20}}
	return st
}

func sortCheckPolicy(strategy string, terms ...string) *config.Effective {
	pol := fullPolicy()
	pol.OrphanFiles.Declared = false // its scan is providers'
	pol.Address = "lake.db.t"
	pol.MatchedBy = `tables "lake.*"`
	pol.DerivedProperties = map[string]config.Setting[string]{"write.parquet.compression-codec": set("zstd", 40)}
	pol.Compaction.Strategy = set(strategy, 8)
	if terms != nil {
		var fields []config.SortField
		for _, term := range terms {
			f, err := config.ParseSortField(term)
			if err != nil {
				panic(err)
			}
			fields = append(fields, f)
		}
		pol.SortOrder = set(fields, 7)
	}
	return pol
}

func refusalOf(tp TablePlan, typ ActionType) (string, bool) {
	for _, r := range tp.Refusals {
		if r.Action == string(typ) {
			return r.Reason, true
		}
	}
	return "", false
}

func TestSortOrderCheckedAgainstSchema(t *testing.T) {
	tests := []struct {
		name  string
		terms []string
		// want are parts of both refusals (replace_sort_order and the sort
		// compaction); none: both actions are planned.
		want []string
	}{
		{name: "valid terms", terms: []string{"event_ts desc nulls last", "bucket(16, user_id)", "truncate(4, name)", "day(event_ts)", "uSeR_Id", "score"}},
		{name: "missing column", terms: []string{"evnt_ts"},
			want: []string{`column "evnt_ts" is not in the table's schema (its columns: "event_ts", "user_id", "uSeR_Id", "name", "score", "payload", "tags", "area")`}},
		{name: "case mismatch", terms: []string{"Event_TS desc"},
			want: []string{`column "Event_TS" is not in the table's schema, which has "event_ts": column names are case-sensitive`}},
		{name: "case mismatch, two candidates", terms: []string{"USER_ID"},
			want: []string{`column "USER_ID" is not in the table's schema, which has "user_id" and "uSeR_Id": column names are case-sensitive`}},
		{name: "nested field", terms: []string{"payload.ts"},
			want: []string{`"payload.ts" is a field inside column "payload" of type struct<...>, and icewright sorts by top-level columns only`}},
		{name: "unorderable type", terms: []string{"area"},
			want: []string{`column "area" has type geometry(OGC:CRS84), which icewright cannot sort by`}},
		{name: "list column", terms: []string{"bucket(8, tags)"},
			want: []string{`column "tags" has type list<string>, which icewright cannot sort by`}},
		{name: "transform not valid for the type", terms: []string{"day(name)"},
			want: []string{`"day(name) ASC NULLS FIRST": the day transform does not apply to column "name" of type string (transforms it takes: identity, bucket, truncate, void)`}},
		{name: "truncate of a double", terms: []string{"truncate(2, score)"},
			want: []string{`the truncate transform does not apply to column "score" of type double (transforms it takes: identity, void)`}},
		{name: "only the bad terms are named", terms: []string{"event_ts", "hour(user_id)", "name", "Name"},
			want: []string{
				`the hour transform does not apply to column "user_id" of type long`,
				`; column "Name" is not in the table's schema, which has "name"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := sortCheckPolicy("sort", tt.terms...)
			tp := PlanTable(pol, sortCheckTable(), testNow)
			// The table's other actions run whatever the sort order.
			for _, typ := range []ActionType{UpdateProperties, ExpireSnapshots} {
				if !hasAction(tp, typ) {
					t.Errorf("no %s: actions %v refusals %v", typ, actionTypes(tp), tp.Refusals)
				}
			}
			sortWhy, sortRefused := refusalOf(tp, ReplaceSortOrder)
			compactWhy, compactRefused := refusalOf(tp, Compact)
			if len(tt.want) == 0 {
				if !hasAction(tp, ReplaceSortOrder) || !hasAction(tp, Compact) || sortRefused || compactRefused {
					t.Fatalf("want replace_sort_order and compact planned: actions %v refusals %v", actionTypes(tp), tp.Refusals)
				}
				return
			}
			if hasAction(tp, ReplaceSortOrder) || hasAction(tp, Compact) || !sortRefused || !compactRefused {
				t.Fatalf("want replace_sort_order and compact refused: actions %v refusals %v", actionTypes(tp), tp.Refusals)
			}
			if len(tp.Refusals) != 2 {
				t.Errorf("refusals %v, want one each", tp.Refusals)
			}
			for _, w := range tt.want {
				if !strings.Contains(sortWhy, w) || !strings.Contains(compactWhy, w) {
					t.Errorf("refusals lack %q:\n replace_sort_order: %s\n compact: %s", w, sortWhy, compactWhy)
				}
			}
			// Where the order comes from and what to do.
			if !strings.HasPrefix(sortWhy, "sort_order = [") || !strings.Contains(sortWhy, "(main.icewright.hcl:7) does not fit this table: ") ||
				!strings.HasSuffix(sortWhy, `. Fix sort_order, or exclude the table from tables "lake.*" (exclude = ["lake.db.t"])`) {
				t.Errorf("replace_sort_order refusal = %q", sortWhy)
			}
			if !strings.HasPrefix(compactWhy, `compaction.strategy = "sort" sorts by sort_order = [`) ||
				!strings.HasSuffix(compactWhy, `. Fix sort_order, use strategy "binpack", or exclude the table from tables "lake.*" (exclude = ["lake.db.t"])`) {
				t.Errorf("compact refusal = %q", compactWhy)
			}
		})
	}
}

// Under binpack the rewrite does not sort: a sort_order that does not fit
// refuses replace_sort_order alone, and the compaction runs.
func TestSortOrderRefusedBinpackStillCompacts(t *testing.T) {
	tp := PlanTable(sortCheckPolicy("binpack", "payload.ts"), sortCheckTable(), testNow)
	if _, ok := refusalOf(tp, ReplaceSortOrder); !ok || hasAction(tp, ReplaceSortOrder) {
		t.Fatalf("want replace_sort_order refused: actions %v refusals %v", actionTypes(tp), tp.Refusals)
	}
	if !hasAction(tp, Compact) || len(tp.Refusals) != 1 {
		t.Fatalf("want the binpack compaction planned and one refusal: actions %v refusals %v", actionTypes(tp), tp.Refusals)
	}
}

// A sort strategy without a policy sort_order sorts by the table's own
// order, which another engine may have set on a column icewright cannot sort
// by; and a policy order equal to such a table order is not replaced, but
// cannot be sorted by either.
func TestSortCompactionChecksTheTablesOrder(t *testing.T) {
	tests := []struct {
		name   string
		pol    *config.Effective
		order  []SortField
		refuse string // part of the compact refusal; "" = planned
	}{
		{name: "table's order fits", pol: sortCheckPolicy("sort"), order: []SortField{{Transform: "bucket[4]", Column: "uSeR_Id", NullsFirst: true}}},
		{name: "table's order on a nested field", pol: sortCheckPolicy("sort"), order: []SortField{{Transform: "identity", Column: "payload.ts", NullsFirst: true}},
			refuse: `compaction.strategy = "sort" sorts by the table's own sort order ["payload.ts ASC NULLS FIRST"] (the policy sets no sort_order), which icewright cannot sort by: "payload.ts" is a field inside column "payload"`},
		{name: "table's order on a dropped column", pol: sortCheckPolicy("sort"), order: []SortField{{Transform: "identity", Column: ""}},
			refuse: "a sort field's source column is not in the table's current schema"},
		{name: "policy order equal to the table's, nested", pol: sortCheckPolicy("sort", "payload.ts"), order: []SortField{{Transform: "identity", Column: "payload.ts", NullsFirst: true}},
			refuse: `compaction.strategy = "sort" sorts by sort_order = ["payload.ts ASC NULLS FIRST"] (main.icewright.hcl:7), which does not fit this table`},
		{name: "policy order empty", pol: sortCheckPolicy("sort"), order: []SortField{{Transform: "identity", Column: "name"}},
			refuse: `compaction.strategy = "sort" needs a sort order, and sort_order = [] (main.icewright.hcl:7) leaves the table unsorted`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := sortCheckTable()
			st.SortOrder = tt.order
			if tt.name == "policy order empty" {
				tt.pol.SortOrder = set([]config.SortField{}, 7)
			}
			tp := PlanTable(tt.pol, st, testNow)
			if _, ok := refusalOf(tp, ReplaceSortOrder); ok {
				t.Fatalf("replace_sort_order refused: %v", tp.Refusals)
			}
			why, refused := refusalOf(tp, Compact)
			if tt.refuse == "" {
				if !hasAction(tp, Compact) || refused {
					t.Fatalf("want compact planned: actions %v refusals %v", actionTypes(tp), tp.Refusals)
				}
				return
			}
			if hasAction(tp, Compact) || !refused || !strings.Contains(why, tt.refuse) {
				t.Fatalf("want compact refused with %q: actions %v refusals %v", tt.refuse, actionTypes(tp), tp.Refusals)
			}
			if !hasAction(tp, ExpireSnapshots) || !hasAction(tp, UpdateProperties) {
				t.Errorf("the table's other actions went with the refusal: %v", actionTypes(tp))
			}
		})
	}
}

func TestZOrderColumnsCheckedAgainstSchema(t *testing.T) {
	tests := []struct {
		name    string
		columns []string
		want    string // part of the refusal; "" = planned
	}{
		{name: "valid", columns: []string{"user_id", "event_ts", "score"}},
		{name: "missing", columns: []string{"user_id", "ts"}, want: `column "ts" is not in the table's schema (its columns: `},
		{name: "case", columns: []string{"Name", "user_id"}, want: `column "Name" is not in the table's schema, which has "name"`},
		{name: "nested", columns: []string{"user_id", "payload.source"}, want: `"payload.source" is a field inside column "payload"`},
		{name: "unorderable", columns: []string{"user_id", "area"}, want: `column "area" has type geometry(OGC:CRS84), which icewright cannot sort by`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := sortCheckPolicy("zorder")
			pol.Compaction.ZOrderColumns = set(tt.columns, 9)
			tp := PlanTable(pol, sortCheckTable(), testNow)
			why, refused := refusalOf(tp, Compact)
			if tt.want == "" {
				if !hasAction(tp, Compact) || refused {
					t.Fatalf("want compact planned: actions %v refusals %v", actionTypes(tp), tp.Refusals)
				}
				return
			}
			if hasAction(tp, Compact) || !refused || !strings.Contains(why, tt.want) ||
				!strings.HasPrefix(why, "compaction.zorder_columns = [") || !strings.Contains(why, `Fix zorder_columns, use strategy "binpack", or exclude the table`) {
				t.Fatalf("want compact refused with %q: actions %v refusals %v", tt.want, actionTypes(tp), tp.Refusals)
			}
			if !hasAction(tp, ExpireSnapshots) || !hasAction(tp, UpdateProperties) {
				t.Errorf("the table's other actions went with the refusal: %v", actionTypes(tp))
			}
		})
	}
}

// What to do names the block that gave the table its policy.
func TestSortRefusalSaysWhatToDo(t *testing.T) {
	for matched, want := range map[string]string{
		`tables "lake.*"`:   `. Fix sort_order, or exclude the table from tables "lake.*" (exclude = ["lake.db.t"])`,
		`table "lake.db.t"`: `. Fix sort_order, or stop managing the table (remove table "lake.db.t")`,
	} {
		pol := sortCheckPolicy("binpack", "nope")
		pol.MatchedBy = matched
		why, ok := refusalOf(PlanTable(pol, sortCheckTable(), testNow), ReplaceSortOrder)
		if !ok || !strings.HasSuffix(why, want) {
			t.Errorf("%s: refusal %q, want it to end %q", matched, why, want)
		}
	}
}

// A state without an observed schema (built by hand) is not checked; an
// observed schema without columns is.
func TestSortCheckNeedsAnObservedSchema(t *testing.T) {
	st := sortCheckTable()
	st.Schema = nil
	tp := PlanTable(sortCheckPolicy("sort", "anything"), st, testNow)
	if !hasAction(tp, ReplaceSortOrder) || !hasAction(tp, Compact) || len(tp.Refusals) > 0 {
		t.Fatalf("unobserved schema: actions %v refusals %v", actionTypes(tp), tp.Refusals)
	}
	st.Schema = []Column{}
	tp = PlanTable(sortCheckPolicy("sort", "anything"), st, testNow)
	if why, _ := refusalOf(tp, ReplaceSortOrder); !strings.Contains(why, `column "anything" is not in the table's schema (its columns: none)`) {
		t.Fatalf("empty schema: refusals %v", tp.Refusals)
	}
	if !slices.ContainsFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(Compact) }) {
		t.Fatalf("empty schema: compact not refused: %v", tp.Refusals)
	}
}
