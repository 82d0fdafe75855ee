// Package reach is what a table's snapshots reach and how sets of files are
// compared in bounded memory. It holds the one manifest walk (Walk: every
// manifest list and distinct manifest read once, entries decoded beside
// their consumers and handed to each of them: the plan's aggregate, the
// orphan scan's referenced set, the expiry index, the files expiry
// releases, the files a failed commit staged, the commit check), the commit
// check (CheckCommit, CheckSnapshots: a rewrite's new snapshot against its
// parent and the change meant, from manifests alone; its memory follows the
// entries of the manifests the two snapshots do not share), the external
// sorter (Sorter,
// Rec: records sorted by key within a record and byte budget, spilling
// sorted runs to disk and merging them) and the referenced set (RefSet,
// with SortedRefSet on the sorter), which the scan walks in ascending order
// beside the sorted listing (docs/design.md §4, §6).
//
// Of icewright it imports only manifestread, the fast decoder a walk may
// choose (Spec.Decoder; iceberg-go's reader unless it does), and of the
// outside world only iceberg-go (the walk reads manifests through the
// table's IO); it does no other I/O than its spill files.
package reach
