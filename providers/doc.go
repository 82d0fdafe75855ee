// Package providers talks to the outside world through iceberg-go and
// arrow-go: it opens catalogs and storage, observes tables into diff's plain
// data types, lists storage and builds referenced sets for orphan detection,
// and executes actions (commits, rewrites, deletions).
//
// Where things are:
//   - session.go: Session, Open, catalogs opened lazily through
//     providers/catalogs (sql on sqlite or PostgreSQL, rest, glue, hive,
//     hadoop), ListTables, LoadTable;
//   - observe.go, histogram.go: Observe/ObserveTable, the current snapshot's
//     files streamed into per-partition aggregates;
//   - reachable.go: ReachableFiles, the walker of what snapshots reach;
//   - orphans.go: the orphan scan (listing first, sorted merge with the
//     referenced set of internal/reach);
//   - expiry.go: EstimateExpiry; inspect.go: Inspect; the demo builder is
//     its own package, providers/demo;
//   - exec_*.go: executing plan actions;
//   - internal/reach: the external sorter and the referenced set;
//     internal/bound: per-request deadlines and retries;
//   - testkit: real tables for tests everywhere; internal/lakehouse: what
//     the demo and testkit share (sqlite catalog, time machine, fixtures).
//
// It may import diff (types), config, iceberg-go, arrow-go and I/O packages.
// It never prints.
package providers
