package reach

import (
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
)

// Target is where a rewrite that moves its inputs to another partition
// spec (partition ageing) puts its outputs: every output must be in spec
// SpecID and partition Partition, and every input must coarsen to exactly
// that partition (Coarsen). A group without a Target keeps its inputs'
// spec and partition.
type Target struct {
	SpecID    int
	Partition map[int]any
}

// TimeRank orders the time transforms from finest to coarsest; 0 is not a
// time transform. Ageing moves a field only to a coarser one.
func TimeRank(t iceberg.Transform) int {
	switch t.(type) {
	case iceberg.HourTransform, *iceberg.HourTransform:
		return 1
	case iceberg.DayTransform, *iceberg.DayTransform:
		return 2
	case iceberg.MonthTransform, *iceberg.MonthTransform:
		return 3
	case iceberg.YearTransform, *iceberg.YearTransform:
		return 4
	}
	return 0
}

// Coarsen is the partition, in spec to, of a file in partition part of
// spec from: a field of to with the id of a field of from keeps its value
// (the same transform of the same column, so every row's value is the
// same); a field of to with another id must be a time transform of a
// column that from partitions by a finer time transform, and takes the
// coarser value of the finer one's window (day d is the month holding d:
// every row of the day is in that month). Anything else has no single
// answer without reading the rows and is an error.
func Coarsen(from, to iceberg.PartitionSpec, part map[int]any) (map[int]any, error) {
	byID := map[int]iceberg.PartitionField{}
	for _, f := range from.Fields() {
		byID[f.FieldID] = f
	}
	out := make(map[int]any, to.NumFields())
	for _, f := range to.Fields() {
		if src, ok := byID[f.FieldID]; ok {
			if src.SourceID() != f.SourceID() || src.Transform.String() != f.Transform.String() {
				return nil, fmt.Errorf("partition field %d is %s of column %d in spec %d, %s of column %d in spec %d",
					f.FieldID, src.Transform, src.SourceID(), from.ID(), f.Transform, f.SourceID(), to.ID())
			}
			out[f.FieldID] = part[f.FieldID]
			continue
		}
		var fine *iceberg.PartitionField
		for _, g := range from.Fields() {
			if g.SourceID() == f.SourceID() && TimeRank(g.Transform) > 0 && TimeRank(g.Transform) < TimeRank(f.Transform) {
				if fine != nil {
					return nil, fmt.Errorf("partition field %s of spec %d: column %d has two finer time fields in spec %d", f.Name, to.ID(), f.SourceID(), from.ID())
				}
				g := g
				fine = &g
			}
		}
		if fine == nil {
			return nil, fmt.Errorf("partition field %s (%s) of spec %d has no finer time field of its column in spec %d", f.Name, f.Transform, to.ID(), from.ID())
		}
		v, err := coarsenValue(fine.Transform, f.Transform, part[fine.FieldID])
		if err != nil {
			return nil, fmt.Errorf("partition field %s: %w", f.Name, err)
		}
		out[f.FieldID] = v
	}
	return out, nil
}

// WindowStart is the first instant of time-transform value v (hours, days,
// months or years since 1970, as Iceberg stores them), in UTC.
func WindowStart(t iceberg.Transform, v int64) (time.Time, bool) {
	epoch := time.Unix(0, 0).UTC()
	switch TimeRank(t) {
	case 1:
		return epoch.Add(time.Duration(v) * time.Hour), true
	case 2:
		return epoch.AddDate(0, 0, int(v)), true
	case 3:
		return epoch.AddDate(0, int(v), 0), true
	case 4:
		return epoch.AddDate(int(v), 0, 0), true
	}
	return time.Time{}, false
}

// WindowValue is the time-transform value of t's window that holds at.
func WindowValue(t iceberg.Transform, at time.Time) (int64, bool) {
	at = at.UTC()
	switch TimeRank(t) {
	case 1:
		return at.Unix() / 3600, true // floor for instants after 1970
	case 2:
		return int64(at.Sub(time.Unix(0, 0).UTC()).Hours()) / 24, true
	case 3:
		return int64(at.Year()-1970)*12 + int64(at.Month()-1), true
	case 4:
		return int64(at.Year() - 1970), true
	}
	return 0, false
}

// TimeOrdinal reads a time partition value (int32, iceberg.Date or int64).
func TimeOrdinal(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// coarsenValue maps a value of the finer time transform to the coarser
// one; null stays null. Values before 1970 are refused rather than
// computed with a floor the callers would have to get right.
func coarsenValue(fine, coarse iceberg.Transform, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	n, ok := TimeOrdinal(v)
	if !ok {
		return nil, fmt.Errorf("time partition value %v (%T) is not a whole number", v, v)
	}
	if n < 0 {
		return nil, fmt.Errorf("time partition value %d is before 1970", n)
	}
	start, ok := WindowStart(fine, n)
	if !ok {
		return nil, fmt.Errorf("%s is not a time transform", fine)
	}
	c, ok := WindowValue(coarse, start)
	if !ok {
		return nil, fmt.Errorf("%s is not a time transform", coarse)
	}
	if TimeRank(coarse) == 2 {
		return iceberg.Date(c), nil // day's result type is date
	}
	return int32(c), nil
}
