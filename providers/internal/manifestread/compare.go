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

// ListDifferences lists where manifest list entry b differs from a, in
// every field of iceberg.ManifestFile: empty when they agree.
func ListDifferences(a, b iceberg.ManifestFile) []string {
	var out []string
	diff := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s: %#v != %#v", what, x, y))
		}
	}
	diff("version", a.Version(), b.Version())
	diff("manifest_path", a.FilePath(), b.FilePath())
	diff("manifest_length", a.Length(), b.Length())
	diff("partition_spec_id", a.PartitionSpecID(), b.PartitionSpecID())
	diff("content", a.ManifestContent(), b.ManifestContent())
	diff("added_snapshot_id", a.SnapshotID(), b.SnapshotID())
	diff("added_files_count", a.AddedDataFiles(), b.AddedDataFiles())
	diff("existing_files_count", a.ExistingDataFiles(), b.ExistingDataFiles())
	diff("deleted_files_count", a.DeletedDataFiles(), b.DeletedDataFiles())
	diff("added_rows_count", a.AddedRows(), b.AddedRows())
	diff("existing_rows_count", a.ExistingRows(), b.ExistingRows())
	diff("deleted_rows_count", a.DeletedRows(), b.DeletedRows())
	diff("sequence_number", a.SequenceNum(), b.SequenceNum())
	diff("min_sequence_number", a.MinSequenceNum(), b.MinSequenceNum())
	diff("key_metadata", a.KeyMetadata(), b.KeyMetadata())
	diff("partitions", a.Partitions(), b.Partitions())
	diff("first_row_id", a.FirstRowID(), b.FirstRowID())
	return out
}
