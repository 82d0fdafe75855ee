package config

import "testing"

func TestParseSortField(t *testing.T) {
	tests := []struct {
		in    string
		want  SortField
		canon string
	}{
		{"col", SortField{Transform: "identity", Column: "col", NullsFirst: true}, "col ASC NULLS FIRST"},
		{"col desc", SortField{Transform: "identity", Column: "col", Descending: true}, "col DESC NULLS LAST"},
		{"event_ts desc nulls last", SortField{Transform: "identity", Column: "event_ts", Descending: true}, "event_ts DESC NULLS LAST"},
		{"col asc nulls first", SortField{Transform: "identity", Column: "col", NullsFirst: true}, "col ASC NULLS FIRST"},
		{"col ASC NULLS LAST", SortField{Transform: "identity", Column: "col"}, "col ASC NULLS LAST"},
		{"col desc nulls first", SortField{Transform: "identity", Column: "col", Descending: true, NullsFirst: true}, "col DESC NULLS FIRST"},
		{"bucket(16, user_id)", SortField{Transform: "bucket[16]", Column: "user_id", NullsFirst: true}, "bucket(16, user_id) ASC NULLS FIRST"},
		{"truncate(4,name) desc", SortField{Transform: "truncate[4]", Column: "name", Descending: true}, "truncate(4, name) DESC NULLS LAST"},
		{"day(ts)", SortField{Transform: "day", Column: "ts", NullsFirst: true}, "day(ts) ASC NULLS FIRST"},
		{"YEAR(ts) desc", SortField{Transform: "year", Column: "ts", Descending: true}, "year(ts) DESC NULLS LAST"},
		{"identity(region)", SortField{Transform: "identity", Column: "region", NullsFirst: true}, "region ASC NULLS FIRST"},
		{"hour(a.b)", SortField{Transform: "hour", Column: "a.b", NullsFirst: true}, "hour(a.b) ASC NULLS FIRST"},
	}
	for _, tt := range tests {
		got, err := ParseSortField(tt.in)
		if err != nil {
			t.Errorf("ParseSortField(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseSortField(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.canon {
			t.Errorf("String() of %q = %q, want %q", tt.in, s, tt.canon)
		}
		// The canonical form parses back to the same field.
		back, err := ParseSortField(got.String())
		if err != nil || back != got {
			t.Errorf("round trip of %q: %+v, %v", tt.in, back, err)
		}
	}
}

func TestParseSortFieldErrors(t *testing.T) {
	for _, in := range []string{
		"", "desc", "col sideways", "col desc nulls", "col nulls middle", "bucket(user_id)",
		"bucket(0, user_id)", "bucket(x, user_id)", "frobnicate(ts)", "day(ts", "col;drop", "1col",
		"col desc desc", "truncate(4, 5)", "day()",
	} {
		if f, err := ParseSortField(in); err == nil {
			t.Errorf("ParseSortField(%q) = %+v, want an error", in, f)
		}
	}
}
