package compaction

import (
	"strings"
	"testing"
	"time"

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
		got, err := ParseWhere(text, whereNow)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !got.Equals(want) {
			t.Fatalf("%s: got %s, want %s", text, got, want)
		}
	}
	for _, bad := range []string{"", "a", "a =", "a = 1 b", "a == 1", "a ! 1", "(a = 1", "a IN ()", "a IS 1", "'x' = a", "a = 1 AND", "a = 'x"} {
		if e, err := ParseWhere(bad, whereNow); err == nil {
			t.Fatalf("%q: want an error, got %s", bad, e)
		}
	}
}

// whereNow is the clock of the parse tests: a Wednesday afternoon, with
// sub-microsecond digits that a timestamp literal drops.
var whereNow = time.Date(2026, 11, 4, 15, 30, 45, 123456789, time.UTC)

// The literals relative to now: current_date is midnight UTC of now's date
// (whatever now's zone), current_timestamp and now() are now to the
// microsecond, and intervals add up left to right. Each is checked as
// parsed and as bound to a date, a timestamp, a timestamptz and a
// nanosecond column.
func TestParseWhereRelative(t *testing.T) {
	midnight := time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC)
	instant := time.Date(2026, 11, 4, 15, 30, 45, 123456000, time.UTC)
	cases := map[string]time.Time{
		"current_date":                                 midnight,
		"CURRENT_DATE - INTERVAL '7' DAY":              midnight.AddDate(0, 0, -7),
		"current_date - interval '2' days":             midnight.AddDate(0, 0, -2),
		"current_date + interval '1 week'":             midnight.AddDate(0, 0, 7),
		"current_date-interval 3 weeks":                midnight.AddDate(0, 0, -21),
		"current_timestamp":                            instant,
		"now()":                                        instant,
		"Now ( ) - interval '90' minute":               instant.Add(-90 * time.Minute),
		"now() - interval '36 hours'":                  instant.Add(-36 * time.Hour),
		"current_timestamp + interval 30 seconds":      instant.Add(30 * time.Second),
		"now() - interval '1' day + interval '2' hour": instant.Add(-22 * time.Hour),
		"current_date - interval '-1' day":             midnight.AddDate(0, 0, 1),
		"current_date - interval '3' months":           time.Date(2026, 8, 4, 0, 0, 0, 0, time.UTC),
		"current_date - interval '1 year'":             time.Date(2025, 11, 4, 0, 0, 0, 0, time.UTC),
		"now() + interval 2 months - interval '1' day": time.Date(2027, 1, 3, 15, 30, 45, 123456000, time.UTC),
	}
	types := []iceberg.Type{iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Timestamp,
		iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.TimestampNs}
	for rel, want := range cases {
		// In UTC+10 it is already 2026-11-05: current_date is still UTC's.
		for _, now := range []time.Time{whereNow, whereNow.In(time.FixedZone("UTC+10", 10*3600))} {
			got, err := ParseWhere("d >= "+rel, now)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if w := iceberg.GreaterThanEqual(iceberg.Reference("d"), iceberg.Timestamp(want.UnixMicro())); !got.Equals(w) {
				t.Fatalf("%s: got %s, want %s", rel, got, w)
			}
			for i, typ := range types {
				sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: typ})
				bound, err := iceberg.BindExpr(sc, got, true)
				if err != nil {
					t.Fatalf("%s on a %s column: %v", rel, typ, err)
				}
				lit := bound.(iceberg.BoundLiteralPredicate).Literal()
				wantLit := []iceberg.Literal{
					iceberg.NewLiteral(iceberg.Date(want.Unix() / 86400)),
					iceberg.NewLiteral(iceberg.Timestamp(want.UnixMicro())),
					iceberg.NewLiteral(iceberg.Timestamp(want.UnixMicro())),
					iceberg.NewLiteral(iceberg.TimestampNano(want.UnixNano())),
				}[i]
				if typ.Equals(iceberg.PrimitiveTypes.Date) && !want.Equal(want.Truncate(24*time.Hour)) {
					// A timestamp bound to a date column is its date.
					wantLit = iceberg.NewLiteral(iceberg.Date(want.Truncate(24*time.Hour).Unix() / 86400))
				}
				if !lit.Equals(wantLit) {
					t.Fatalf("%s on a %s column: bound to %s, want %s", rel, typ, lit, wantLit)
				}
			}
		}
	}
	for text, want := range map[string]string{
		"d >= current_date - 7":                        "expected INTERVAL after '-'",
		"d >= current_date - interval":                 "expected an interval count",
		"d >= current_date - interval '7'":             "expected an interval unit",
		"d >= current_date - interval '7' fortnight":   `unknown interval unit "fortnight"`,
		"d >= current_date - interval '1201' month":    "longer than 100 years",
		"d >= current_date + interval '101' years":     "longer than 100 years",
		"d >= current_date - interval '1.5' day":       "bad interval count",
		"d >= current_date - interval 'x day'":         "bad interval count",
		"d >= now":                                     "expected '('",
		"d >= now(1)":                                  "expected ')'",
		"d >= current_date - interval '99999999' week": "longer than 100 years",
		"d >= current_date - interval '7' \"day\"":     "expected an interval unit",
		"d >= current_date -7":                         "unexpected '-7'",
	} {
		e, err := ParseWhere(text, whereNow)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v, %v; want an error saying %q", text, e, err, want)
		}
	}
}

// Whatever the text, ParseWhere returns an expression or an error, and a
// parsed expression binds, projects and evaluates without panicking.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"a = 1", "event_ts >= '2026-11-03T00:00:00Z'", "NOT (a IN (1, 2)) OR b IS NOT NULL",
		"a == 1", "'x'", "(((", "a <> 'it''s' AND TRUE", "x < -1e3", "\"q\" != false",
		"event_ts >= current_date - interval '7' day", "event_ts < now() + interval '90 minutes' - interval 2 weeks",
		"a IN (current_timestamp)", "event_ts > now( - interval '1' fortnight", "event_ts >= current_date - interval '1 year' + interval 3 months"} {
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
		e, err := ParseWhere(s, whereNow)
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

// A month or a year moves the calendar and clamps the day of the month to
// the month's last day, as PostgreSQL's and Spark's month arithmetic do.
func TestAddMonthsClampsToMonthEnd(t *testing.T) {
	at := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 7, 8, 9, 10, time.UTC) }
	for _, tc := range []struct {
		from   time.Time
		months int
		want   time.Time
	}{
		{at(2026, 3, 31), -1, at(2026, 2, 28)},
		{at(2024, 3, 31), -1, at(2024, 2, 29)},
		{at(2026, 1, 31), 1, at(2026, 2, 28)},
		{at(2026, 5, 31), 1, at(2026, 6, 30)},
		{at(2026, 11, 4), -3, at(2026, 8, 4)},
		{at(2026, 12, 15), 1, at(2027, 1, 15)},
		{at(2024, 2, 29), 12, at(2025, 2, 28)},
		{at(2026, 1, 31), -13, at(2024, 12, 31)},
		{at(2026, 6, 30), 0, at(2026, 6, 30)},
	} {
		if got := addMonths(tc.from, tc.months); !got.Equal(tc.want) {
			t.Errorf("%s %+d months = %s, want %s", tc.from.Format(time.DateOnly), tc.months, got, tc.want)
		}
	}
	// Through the parser: the last day of March minus a month.
	e, err := ParseWhere("d >= current_date - interval '1' month", time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.String(), "2026-02-28 00:00:00") {
		t.Fatalf("%s: want 2026-02-28 00:00:00", e)
	}
}
