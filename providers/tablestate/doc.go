// Package tablestate is the part of a table's observed state that its
// metadata alone gives (Metadata: properties, schema with the sort
// transforms the rewrite can honour, specs and the ones iceberg-go cannot
// write manifests of, sort order, snapshots, refs, metadata log; SortFields:
// a sort order in diff's vocabulary). Every observation starts from it, as
// do Describe, the sweep's re-check and inspect; the kinds add the rest.
//
// It imports diff and providers/compaction. It never prints.
package tablestate
