package compaction

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// StaleSort is the rule that makes a data file a candidate of a sort or
// zorder rewrite whatever its size (issue 29, item 7): the file records a
// sort_order_id other than the one the rewrite records on its outputs (the
// id of the target order in the table's metadata for sort; for zorder,
// whose interleaving is no table sort order, any id but the unsorted 0:
// icewright's zorder outputs record none). A file that
// records no sort_order_id is not known to be stale and is left to the size
// and delete rules: treating "unknown" as stale would rewrite, once, every
// file of every table whose writers leave the field out.
//
// Files whose rows are out of order under their recorded id (bounds that
// overlap a neighbour's) are not detected: a partition larger than the
// target is rewritten as several groups, each sorted on its own, whose
// outputs overlap each other, so an overlap rule would plan the same
// partition again after every apply.
//
// A partition holding a stale file is rewritten as one group of all its
// candidates (size and delete candidates and stale files), whatever
// min_input_files: the files must be rewritten for their order, not to
// merge them, and one group sorts them together. diff plans the same
// (diff.CompactionSelection, PartitionStats.StaleSortFiles).
type StaleSort struct {
	// want is the id the rewrite records; -1 when the target order is
	// not in the metadata yet (replace_sort_order in the same apply adds
	// it), so that every recorded id is stale.
	want int
}

// NewStaleSort is the rule of a rewrite with strategy and order (nil: the
// table's default order) on md; nil (no file is stale) for binpack or when
// a sort has no order.
func NewStaleSort(md table.Metadata, strategy Strategy, order *table.SortOrder) *StaleSort {
	switch strategy {
	case ZOrder:
		return &StaleSort{want: table.UnsortedSortOrderID}
	case Sort:
		o := md.SortOrder()
		if order != nil {
			o = *order
		}
		if o.IsUnsorted() || o.Len() == 0 {
			return nil
		}
		if id, ok := orderIDIn(md, o); ok {
			return &StaleSort{want: id}
		}
		return &StaleSort{want: -1}
	}
	return nil
}

// Stale reports whether df records a sort order other than the rewrite's.
func (s *StaleSort) Stale(df iceberg.DataFile) bool {
	if s == nil || df.ContentType() != iceberg.EntryContentData {
		return false
	}
	id := df.SortOrderID()
	return id != nil && *id != s.want
}

// orderIDIn is the id of the order of md that sorts as o does; false when
// md has none. A rewrite records only such an id (resolve): an id naming a
// different order would make engines trust a sortedness that does not hold.
func orderIDIn(md table.Metadata, o table.SortOrder) (int, bool) {
	for _, so := range md.SortOrders() {
		if so.Equals(o) || (so.Len() == o.Len() && sameFields(so, o)) {
			return so.OrderID(), true
		}
	}
	return 0, false
}
