package reach

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// TestCoarsen: a field kept by id keeps its value, the coarser time field
// takes the window of the finer value (the last day of a month is in that
// month, not the next), null stays null, and what has no single answer is
// an error.
func TestCoarsen(t *testing.T) {
	day := iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}}
	hour := iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "ts_hour", Transform: iceberg.HourTransform{}}
	month := iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "ts_month", Transform: iceberg.MonthTransform{}}
	year := iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1003, Name: "ts_year", Transform: iceberg.YearTransform{}}
	dayOf := iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1004, Name: "ts_day", Transform: iceberg.DayTransform{}}
	bucket := iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}}
	spec := func(id int, f ...iceberg.PartitionField) iceberg.PartitionSpec {
		return iceberg.NewPartitionSpecID(id, f...)
	}
	jan31 := iceberg.Date(19753) // 2024-01-31
	for _, c := range []struct {
		name     string
		from, to iceberg.PartitionSpec
		part     map[int]any
		want     string
		err      string
	}{
		{"day to month", spec(0, day, bucket), spec(1, month, bucket), map[int]any{1000: jan31, 1001: int32(3)}, "1001=3, 1002=648", ""},
		{"day to year", spec(0, day), spec(1, year), map[int]any{1000: jan31}, "1003=54", ""},
		{"hour to day", spec(0, hour), spec(1, dayOf), map[int]any{1000: int32(19753*24 + 23)}, "1004=19753", ""},
		{"null stays null", spec(0, day, bucket), spec(1, month, bucket), map[int]any{1000: nil, 1001: int32(1)}, "1001=1", ""},
		{"no finer field", spec(0, bucket), spec(1, month, bucket), map[int]any{1001: int32(1)}, "", "has no finer time field"},
		{"a kept id changed", spec(0, day, bucket), spec(1, month, iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 8}}), map[int]any{1000: jan31, 1001: int32(1)}, "", "partition field 1001"},
		{"before 1970", spec(0, day), spec(1, month), map[int]any{1000: iceberg.Date(-1)}, "", "before 1970"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Coarsen(c.from, c.to, c.part)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, c.err)
				}
				return
			}
			if err != nil || partitionString(got) != c.want {
				t.Fatalf("got (%s), %v; want (%s)", partitionString(got), err, c.want)
			}
		})
	}
}
