// Package orphans is the home of the remove_orphan_files action kind
// (diff/orphans.go decides it): the listing of a table's storage (local
// directories walked without following links, object stores through
// iceberg-go), its scope (the table location and write paths, other tables
// sharing them, the storage each root is reached with), the index of other
// tables' references (Tables), the scan that compares the listing with the
// referenced set built on the one manifest walk (Scan, in a plan), the
// removal of what the plan approved (Remove, in apply), and the
// quarantine: moving orphans aside, purging runs past their time, and
// restoring one (Restore). Kind registers it (kind.Kind): Kind.Scan builds
// the scan's environment from the session's, its executor re-checks each
// sweep with the plan's rules (diff.RecheckOrphans), and ForeignOwner is
// expiry's question of which other table references a file.
//
// It may import diff, config, providers/catalogs, providers/internal
// (reach, store) and providers/kind, iceberg-go; never providers itself,
// which calls it. It never prints.
package orphans
