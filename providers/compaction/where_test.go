package compaction

import (
	"testing"

	"github.com/apache/iceberg-go"
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
