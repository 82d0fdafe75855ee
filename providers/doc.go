// Package providers talks to the outside world through iceberg-go and
// arrow-go: it opens catalogs and storage, observes tables into diff's plain
// data types, lists storage and builds referenced sets for orphan detection,
// and executes actions (commits, rewrites, deletions).
//
// It may import diff (types), config, iceberg-go, arrow-go and I/O packages.
// It never prints.
package providers
