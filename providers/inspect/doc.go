// Package inspect is `icewright inspect` (docs/design.md §1): Run reports
// on any table of a configured catalog, managed or not: its identity,
// schema, sort orders, file sizes (with per-partition histograms on
// request), snapshots and what the old ones hold alone, orphan files and
// quarantine runs, and recommendations. A managed table's recommendations
// are read off the plan the session makes for it (Observation.Plan), so
// inspect promises nothing plan does not do; an unmanaged table is
// measured against providers.UnmanagedPolicy.
//
// It reports on a providers.Session and adds nothing to it; cmd calls it.
// It may import diff, config and providers with its subpackages. It never
// prints.
package inspect
