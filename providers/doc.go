// Package providers is the session between icewright and the outside world,
// through iceberg-go and arrow-go: what apply and cmd call. It opens a
// configuration's catalogs and storage with deadlines and bounded retries,
// observes tables into diff's plain data types, and runs the executors of
// plan actions behind the Executor seam, on table handles apply holds.
//
// Where things are:
//   - session.go, storage_limits.go: Session, Open, catalogs opened lazily
//     through providers/catalogs, ListTables, the storage and catalog
//     deadlines (WithStorageLimits);
//   - observe.go, histogram.go, metadata_name.go: Observe and ObservePlan,
//     the current snapshot's files folded into per-partition aggregates on
//     the one manifest walk (internal/reach), which the orphan scan and
//     the expiry index share; Observation.Plan;
//   - sweep.go: the session's side of the orphan sweep (its environment,
//     the other tables' locations, restore); expiry.go: the session's side
//     of the expiry estimate;
//   - access.go: what the session offers the packages that report on it
//     (providers/inspect, providers/doctor): its configuration, clock,
//     environment and deadlines, table loads, observation without expiry,
//     the size histograms, the orphan scan, UnmanagedPolicy;
//   - engines.go: the engine a policy's compaction delegates to, opened
//     once per session (providers/engine);
//   - execute.go, exec_*.go: Executor, the table handle, and the executors
//     of properties and sort order, compaction and manifests (expiry and
//     the sweep run in their packages); lock.go: the lease;
//   - validate.go: configuration checks that need providers' languages.
//
// Below it, by domain: catalogs (one descriptor per catalog type: opening,
// metadata naming, doctor's probes; walking a catalog's tables), engine
// (one descriptor per engine; spark), inspect and doctor (the two reports
// on a session, which cmd calls), orphans (listing, scope, scan, removal, quarantine, restore),
// expiry (estimate and execution), compaction (the engine), demo (the demo
// builder); internal/reach (the one manifest walk, the external sorter,
// the referenced set), internal/store (what the session and the domains
// share: results, commit rules, the path key), internal/bound (call
// deadlines and retries); testkit: real tables for tests everywhere.
//
// It may import diff (types), config, its subpackages, iceberg-go, arrow-go
// and I/O packages. It never prints.
package providers
