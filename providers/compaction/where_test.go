package compaction

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func TestParseWhere(t *testing.T) {
	ts, kind := iceberg.Reference("event_ts"), iceberg.Reference("kind")
	cases := map[string]iceberg.BooleanExpression{
		"event_ts >= '2026-11-03T00:00:00Z'": iceberg.GreaterThanEqual(ts, "2026-11-03T00:00:00Z"),
		"kind = 'it''s'":                     iceberg.EqualTo(kind, "it's"),
		`"kind" <> 'a' and x < -1.5`: iceberg.NewAnd(iceberg.NotEqualTo(kind, "a"),
			iceberg.LessThan(iceberg.Reference("x"), -1.5)),
		"a = 1 OR b != 2 AND c > 3": iceberg.NewOr(iceberg.EqualTo(iceberg.Reference("a"), int64(1)),
			iceberg.NewAnd(iceberg.NotEqualTo(iceberg.Reference("b"), int64(2)), iceberg.GreaterThan(iceberg.Reference("c"), int64(3)))),
		"NOT (a <= 1) AND b IS NOT NULL": iceberg.NewAnd(iceberg.NewNot(iceberg.LessThanEqual(iceberg.Reference("a"), int64(1))),
			iceberg.NotNull(iceberg.Reference("b"))),
		"kind IN ('a', 'b')": iceberg.IsIn(kind, "a", "b"),
		"kind NOT IN ('a')":  iceberg.NotIn(kind, "a"),
		"kind is null":       iceberg.IsNull(kind),
		"s.nested = true":    iceberg.EqualTo(iceberg.Reference("s.nested"), true),
		"TRUE":               iceberg.AlwaysTrue{},
	}
	for text, want := range cases {
		got, err := ParseWhere(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !got.Equals(want) {
			t.Fatalf("%s: got %s, want %s", text, got, want)
		}
	}
	for _, bad := range []string{"", "a", "a =", "a = 1 b", "a == 1", "a ! 1", "(a = 1", "a IN ()", "a IS 1", "'x' = a", "a = 1 AND", "a = 'x"} {
		if e, err := ParseWhere(bad); err == nil {
			t.Fatalf("%q: want an error, got %s", bad, e)
		}
	}
}

// Whatever the text, ParseWhere returns an expression or an error, and a
// parsed expression binds, projects and evaluates without panicking.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"a = 1", "event_ts >= '2026-11-03T00:00:00Z'", "NOT (a IN (1, 2)) OR b IS NOT NULL",
		"a == 1", "'x'", "(((", "a <> 'it''s' AND TRUE", "x < -1e3", "\"q\" != false"} {
		f.Add(s)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "b", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "a_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	md, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "file:///tmp/fuzz", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseWhere(s)
		if err != nil {
			return
		}
		if e == nil {
			t.Fatalf("%q: nil expression without an error", s)
		}
		w, err := NewWhereFilter(md, e)
		if err != nil {
			return
		}
		specID := md.PartitionSpecs()[0].ID()
		_, _ = w.MayMatch(specID, map[int]any{1000: int32(20395), 1001: "x", 1002: int32(1)})
		_, _ = w.MayMatch(specID, map[int]any{1000: nil, 1001: nil, 1002: nil})
	})
}
