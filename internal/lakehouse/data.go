package lakehouse

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// EventsSchema is the schema of the demo's and the test kit's tables: a
// small event log. Every column is optional so arrow's nullable columns
// match without casts.
func EventsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "event_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "user_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "kind", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "payload", Type: iceberg.PrimitiveTypes.String},
	)
}

// DayFieldID is the partition field id of DaySpec's event_day.
const DayFieldID = 1000

// DaySpec partitions EventsSchema by day(event_ts).
func DaySpec() *iceberg.PartitionSpec {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{3}, FieldID: DayFieldID, Name: "event_day", Transform: iceberg.DayTransform{},
	})
	return &spec
}

var kinds = []string{"click", "view", "purchase", "signup"}

// EventRecords builds n rows with ids from startID on `spread` consecutive
// days from day (row id mod spread picks the day; within it, the second),
// deterministic so tests can count exactly.
func EventRecords(sc *iceberg.Schema, startID int64, n int, day time.Time, spread int) (arrow.Table, error) {
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	day = day.UTC().Truncate(24 * time.Hour)
	for i := range n {
		id := startID + int64(i)
		ts := day.AddDate(0, 0, int(id%int64(max(spread, 1)))).Add(time.Duration(id%86400) * time.Second)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.Int64Builder).Append(id % 97)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		b.Field(3).(*array.StringBuilder).Append(kinds[id%int64(len(kinds))])
		b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("payload-%d", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(asc, []arrow.RecordBatch{rec}), nil
}

// AppendEvents commits one append of n rows spread over `spread` days from
// day and returns the new table.
func AppendEvents(ctx context.Context, tbl *table.Table, startID int64, n int, day time.Time, spread int, snapshotProps iceberg.Properties) (*table.Table, error) {
	at, err := EventRecords(tbl.Schema(), startID, n, day, spread)
	if err != nil {
		return nil, err
	}
	defer at.Release()
	out, err := tbl.AppendTable(ctx, at, int64(n)+1, snapshotProps)
	if err != nil {
		return nil, fmt.Errorf("append to %v: %w", tbl.Identifier(), err)
	}
	return out, nil
}
