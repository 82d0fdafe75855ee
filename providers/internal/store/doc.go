// Package store is what providers, the orphan sweep (providers/orphans) and
// expiry (providers/expiry) share to change a table and its storage: the
// executors' result, progress hook and errors (providers re-exports them
// for apply), the classification of a catalog's commit errors and the
// requirements that pin a table's refs, the one path key (NormPath, a thin
// call to diff.NormalizePath), local paths, and the gc.enabled rule.
//
// It imports diff and iceberg-go's table and io, nothing else of icewright.
package store
