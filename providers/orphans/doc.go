// Package orphans is the orphan-file sweep: the listing of a table's
// storage (local directories walked without following links, object
// stores through iceberg-go), its scope (the table location and write
// paths, other tables sharing them, the storage each root is reached
// with), the scan that compares the listing with the referenced set built
// on the one manifest walk (Scan, in a plan), the removal of what the plan
// approved (Remove, in apply), and the quarantine: moving orphans aside,
// purging runs past their time, and restoring one (Restore).
//
// It may import diff, config, providers/catalogs and providers/internal
// (reach, store), iceberg-go; never providers itself, which calls it. It
// never prints.
package orphans
