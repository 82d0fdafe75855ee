// Package tablemeta is the home of two action kinds that share one commit,
// update_properties and replace_sort_order (diff/properties.go,
// diff/sortorder.go decide them): Kind, their executor, which commits the
// properties and the sort order in one metadata commit asserting main has
// not moved and writes nothing when the table already matches (Apply), and
// BuildSortOrder, the configuration's sort fields as an iceberg-go order
// (also the order a sort compaction's observation checks files against).
// Their observation is the table's metadata, which every plan reads
// (providers/tablestate).
package tablemeta
