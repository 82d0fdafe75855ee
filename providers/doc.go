// Package providers is the session between icewright and the outside world,
// through iceberg-go and arrow-go: what apply and cmd call. It opens a
// configuration's catalogs and storage with deadlines and bounded retries,
// observes tables into diff's plain data types, and runs the action kinds'
// executors behind the Executor seam, on table handles apply holds. It
// keeps nothing specific to one action kind: each kind has its home below
// it (providers/kind), registered once in kinds.go.
//
// Where things are:
//   - session.go, storage_limits.go: Session, Open, catalogs opened lazily
//     through providers/catalogs, ListTables, the storage and catalog
//     deadlines (WithStorageLimits); delete_settings.go: the catalog
//     properties that pace deletions and manifest reads; metadata_name.go:
//     the metadata file names a catalog type writes;
//   - kinds.go: the one list of action kinds, the Env each receives, and
//     Executor; execute.go, exec_common.go: the table handle, the lease's
//     entry points (providers/lease holds its objects and protocol), the
//     Executor seam and its vocabulary (ExecResult, ErrConflict, ...);
//   - observe.go: Observe and ObservePlan (the metadata, the one manifest
//     walk with the aggregate, the orphan scan and the expiry index riding
//     on it, then each kind's Observe), Observation.Plan; describe.go:
//     Describe (the metadata alone, for import);
//   - sweep.go: the tables the run can see (every configured catalog's,
//     each read once with its location and references), the orphan sweep's
//     Kind with the session's loaders, RestoreQuarantine;
//   - access.go: what the session offers the packages that report on it
//     (providers/inspect, providers/doctor): its configuration, clock,
//     environment and deadlines, table loads, observation without expiry,
//     the size histograms, the orphan scan, UnmanagedPolicy;
//   - engines.go: the engine a policy's compaction delegates to, opened
//     once per session (providers/engine);
//   - validate.go: configuration checks that need providers' languages.
//
// Below it, the homes of the action kinds: tablemeta (properties and sort
// order), dangling, ageing, compact, manifests, expiry, orphans, with kind
// (the seam and the executor steps they share) and tablestate (the state
// the metadata gives); then by domain: catalogs (one descriptor per catalog
// type: opening, metadata naming, doctor's probes; walking a catalog's
// tables), engine (one descriptor per engine; spark), inspect and doctor
// (the two reports on a session, which cmd calls), compaction (the
// streaming rewrite engine), lease (the table's lease), demo (the demo
// builder); internal/reach (the one manifest walk, the external sorter,
// the referenced set, the commit check), internal/store (what the session
// and the kinds share: results, commit rules, the path key),
// internal/bound (call deadlines and retries), internal/objdel and objlist
// (batched deletion, fanned-out listing); testkit: real tables for tests
// everywhere.
//
// It may import diff (types), config, its subpackages, iceberg-go, arrow-go
// and I/O packages. It never prints.
package providers
