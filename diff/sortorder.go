package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/icewright/icewright/config"
)

// String is the canonical form used in plans, with direction and null order
// spelled out: "event_ts DESC NULLS LAST", "bucket(16, user_id) ASC NULLS FIRST".
// It is config's rendering, so a plan spells a term as the language does.
func (f SortField) String() string {
	return config.SortField{Transform: normTransform(f.Transform), Column: f.Column, Descending: f.Descending, NullsFirst: f.NullsFirst}.String()
}

// normTransform makes "", "Identity" and "bucket[ 16 ]" compare as Iceberg
// does: transforms are case-insensitive and carry no spaces.
func normTransform(t string) string {
	t = strings.ToLower(strings.ReplaceAll(t, " ", ""))
	if t == "" {
		return "identity"
	}
	return t
}

func sortFieldsFromConfig(in []config.SortField) []SortField {
	out := make([]SortField, len(in))
	for i, f := range in {
		out[i] = SortField{Transform: normTransform(f.Transform), Column: f.Column, Descending: f.Descending, NullsFirst: f.NullsFirst}
	}
	return out
}

func sortStrings(fs []SortField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func sameSortOrder(a, b []SortField) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if normTransform(a[i].Transform) != normTransform(b[i].Transform) ||
			a[i].Column != b[i].Column ||
			a[i].Descending != b[i].Descending ||
			a[i].NullsFirst != b[i].NullsFirst {
			return false
		}
	}
	return true
}

// planSortOrder installs the policy's sort order as the table's default when
// they differ. A policy without sort_order leaves the table's order alone.
// An order icewright cannot sort the table by (sortOrderProblems) is refused
// in the plan, not found by apply; the table's other actions still run.
func planSortOrder(pol *config.Effective, st *TableState) (Action, []Refusal, bool) {
	if !pol.SortOrder.Set {
		return Action{}, nil, false
	}
	want := sortFieldsFromConfig(pol.SortOrder.Value)
	if sameSortOrder(want, st.SortOrder) {
		return Action{}, nil, false
	}
	if problems := sortOrderProblems(st, want); len(problems) > 0 {
		return Action{}, []Refusal{{
			Action: string(ReplaceSortOrder),
			Reason: fmt.Sprintf("%s does not fit this table: %s. Fix sort_order, or %s",
				policySortOrder(pol), strings.Join(problems, "; "), excludeHint(pol)),
		}}, false
	}
	return Action{
		Type:   ReplaceSortOrder,
		Reason: policySortOrder(pol),
		SortOrder: &SortOrderChange{
			Before: sortStrings(st.SortOrder),
			After:  sortStrings(want),
			Fields: want,
		},
	}, nil, true
}

// policySortOrder is `sort_order = ["a ASC NULLS FIRST"] (main.icewright.hcl:7)`.
func policySortOrder(pol *config.Effective) string {
	return reason("sort_order", quotedList(sortStrings(sortFieldsFromConfig(pol.SortOrder.Value))), pol.SortOrder.Origin, pol.MatchRange)
}

func quotedList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// sortOrderBlocked is why a compaction with strategy sort or zorder cannot
// order this table's rows ("" when it can): the order it sorts by (the
// policy's sort_order, which replace_sort_order installs first, else the
// table's own) or its zorder_columns name what icewright cannot sort by.
func sortOrderBlocked(pol *config.Effective, st *TableState) string {
	c := pol.Compaction
	switch c.Strategy.Value {
	case "sort":
		if pol.SortOrder.Set {
			if problems := sortOrderProblems(st, sortFieldsFromConfig(pol.SortOrder.Value)); len(problems) > 0 {
				return fmt.Sprintf("compaction.strategy = \"sort\" sorts by %s, which does not fit this table: %s. Fix sort_order, use strategy \"binpack\", or %s",
					policySortOrder(pol), strings.Join(problems, "; "), excludeHint(pol))
			}
			return ""
		}
		if problems := sortOrderProblems(st, st.SortOrder); len(problems) > 0 {
			return fmt.Sprintf("compaction.strategy = \"sort\" sorts by the table's own sort order %s (the policy sets no sort_order), which icewright cannot sort by: %s. Set sort_order, use strategy \"binpack\", or %s",
				quotedList(sortStrings(st.SortOrder)), strings.Join(problems, "; "), excludeHint(pol))
		}
	case "zorder":
		if problems := zorderProblems(st, c.ZOrderColumns.Value); len(problems) > 0 {
			return fmt.Sprintf("%s does not fit this table: %s. Fix zorder_columns, use strategy \"binpack\", or %s",
				reason("compaction.zorder_columns", quotedList(c.ZOrderColumns.Value), c.ZOrderColumns.Origin, c.DeclRange),
				strings.Join(problems, "; "), excludeHint(pol))
		}
	}
	return ""
}

// sortOrderProblems says, one sentence per field, why icewright cannot order
// the table's rows by fields: a column the current schema lacks (names are
// case-sensitive, as iceberg-go's FindFieldByName), a nested field, a type
// the engine cannot order, a transform that does not apply to the type.
// What the engine can do is data, Column.SortTransforms, which providers
// fill from the engine itself. Nil when the schema was not observed.
func sortOrderProblems(st *TableState, fields []SortField) []string {
	if st.Schema == nil {
		return nil
	}
	var out []string
	for _, f := range fields {
		col, why := sortColumn(st.Schema, f.Column)
		if why != "" {
			out = append(out, why)
			continue
		}
		tr, _, _ := strings.Cut(normTransform(f.Transform), "[")
		switch {
		case len(col.SortTransforms) == 0:
			out = append(out, unsortableType(col))
		case !slices.Contains(col.SortTransforms, tr):
			out = append(out, fmt.Sprintf("%s: the %s transform does not apply to column %q of type %s (transforms it takes: %s)",
				quote(f.String()), tr, col.Name, shortType(col.Type), strings.Join(col.SortTransforms, ", ")))
		}
	}
	return out
}

// zorderProblems is sortOrderProblems for zorder columns, which the
// rewrite orders by their values (identity).
func zorderProblems(st *TableState, columns []string) []string {
	if st.Schema == nil {
		return nil
	}
	var out []string
	for _, name := range columns {
		col, why := sortColumn(st.Schema, name)
		switch {
		case why != "":
			out = append(out, why)
		case !slices.Contains(col.SortTransforms, "identity"):
			out = append(out, unsortableType(col))
		}
	}
	return out
}

// sortColumn finds the top-level column name in schema, or says why not.
func sortColumn(schema []Column, name string) (Column, string) {
	if name == "" {
		// A table's own order on a column observation could not name.
		return Column{}, "a sort field's source column is not in the table's current schema"
	}
	for _, c := range schema {
		if c.Name == name {
			return c, ""
		}
	}
	var folded []string
	for _, c := range schema {
		if strings.EqualFold(c.Name, name) {
			folded = append(folded, quote(c.Name))
		}
	}
	if len(folded) > 0 {
		return Column{}, fmt.Sprintf("column %q is not in the table's schema, which has %s: column names are case-sensitive",
			name, strings.Join(folded, " and "))
	}
	if head, _, ok := strings.Cut(name, "."); ok {
		for _, c := range schema {
			if c.Name == head && nestedType(c.Type) {
				return Column{}, fmt.Sprintf("%q is a field inside column %q of type %s, and icewright sorts by top-level columns only",
					name, head, shortType(c.Type))
			}
		}
	}
	return Column{}, fmt.Sprintf("column %q is not in the table's schema (its columns: %s)", name, columnNames(schema))
}

func unsortableType(col Column) string {
	return fmt.Sprintf("column %q has type %s, which icewright cannot sort by", col.Name, shortType(col.Type))
}

// nestedType reports whether an Iceberg type string is a struct, list or map.
func nestedType(t string) bool {
	return strings.HasPrefix(t, "struct<") || strings.HasPrefix(t, "list<") || strings.HasPrefix(t, "map<")
}

// shortType keeps a message readable when a type is a long nested one.
func shortType(t string) string {
	const limit = 40
	if len(t) <= limit {
		return t
	}
	if i := strings.IndexByte(t, '<'); i > 0 {
		return t[:i] + "<...>"
	}
	return t[:limit] + "..."
}

// columnNames lists the first columns of a schema for a message.
func columnNames(schema []Column) string {
	const limit = 12
	if len(schema) == 0 {
		return "none"
	}
	var names []string
	for i, c := range schema {
		if i == limit {
			names = append(names, fmt.Sprintf("... (%d in all)", len(schema)))
			break
		}
		names = append(names, quote(c.Name))
	}
	return strings.Join(names, ", ")
}

// excludeHint is what else a user can do about a policy that does not fit
// one table: leave the table out of the selector that gave it the policy.
func excludeHint(pol *config.Effective) string {
	if strings.HasPrefix(pol.MatchedBy, "tables ") {
		return fmt.Sprintf("exclude the table from %s (exclude = [%q])", pol.MatchedBy, pol.Address)
	}
	if pol.MatchedBy != "" {
		return fmt.Sprintf("stop managing the table (remove %s)", pol.MatchedBy)
	}
	return "exclude the table"
}
