// Package reach holds what the orphan scan, expiry and its estimate share to
// compare sets of files in bounded memory: the external sorter (Sorter, Rec:
// records sorted by key within a record and byte budget, spilling sorted
// runs to disk and merging them) and the referenced set (RefSet, with
// SortedRefSet on the sorter), which the scan walks in ascending order
// beside the sorted listing (docs/design.md §4, §6).
//
// It imports nothing of iceops and does no I/O other than its spill files.
package reach
