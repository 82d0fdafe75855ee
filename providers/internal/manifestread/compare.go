package manifestread

import (
	"fmt"
	"reflect"

	"github.com/apache/iceberg-go"
)

// Differences lists where entry b differs from entry a in the fields this
// package decodes (Read's promise): empty when they agree. The
// differential tests hold Read's entries to iceberg-go's with it.
func Differences(a, b iceberg.ManifestEntry) []string {
	var out []string
	diff := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s: %#v != %#v", what, x, y))
		}
	}
	diff("status", a.Status(), b.Status())
	diff("snapshot_id", a.SnapshotID(), b.SnapshotID())
	diff("sequence_number", a.SequenceNum(), b.SequenceNum())
	diff("file_sequence_number", a.FileSequenceNum(), b.FileSequenceNum())
	x, y := a.DataFile(), b.DataFile()
	diff("content", x.ContentType(), y.ContentType())
	diff("file_path", x.FilePath(), y.FilePath())
	diff("file_format", x.FileFormat(), y.FileFormat())
	diff("partition", x.Partition(), y.Partition())
	diff("record_count", x.Count(), y.Count())
	diff("file_size_in_bytes", x.FileSizeBytes(), y.FileSizeBytes())
	diff("spec_id", x.SpecID(), y.SpecID())
	diff("equality_ids", x.EqualityFieldIDs(), y.EqualityFieldIDs())
	diff("sort_order_id", x.SortOrderID(), y.SortOrderID())
	diff("first_row_id", x.FirstRowID(), y.FirstRowID())
	diff("referenced_data_file", x.ReferencedDataFile(), y.ReferencedDataFile())
	diff("content_offset", x.ContentOffset(), y.ContentOffset())
	diff("content_size_in_bytes", x.ContentSizeInBytes(), y.ContentSizeInBytes())
	return out
}
