package diff

import (
	"strings"

	"github.com/iceops/iceops/config"
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
func planSortOrder(pol *config.Effective, st *TableState) (Action, bool) {
	if !pol.SortOrder.Set {
		return Action{}, false
	}
	want := sortFieldsFromConfig(pol.SortOrder.Value)
	if sameSortOrder(want, st.SortOrder) {
		return Action{}, false
	}
	after := sortStrings(want)
	quoted := make([]string, len(after))
	for i, s := range after {
		quoted[i] = quote(s)
	}
	return Action{
		Type:   ReplaceSortOrder,
		Reason: reason("sort_order", "["+strings.Join(quoted, ", ")+"]", pol.SortOrder.Origin, pol.MatchRange),
		SortOrder: &SortOrderChange{
			Before: sortStrings(st.SortOrder),
			After:  after,
			Fields: want,
		},
	}, true
}
