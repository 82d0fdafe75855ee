// Package expiry is snapshot expiry: the estimate a plan shows (Estimate,
// from walks of its own, or Index, recorded on the plan's one manifest
// walk) and the execution apply runs (Expire: exactly the planned snapshots
// and refs in one commit, then the files reachable before and not after).
//
// It may import diff, config and providers/internal (reach, store, bound),
// iceberg-go; never providers itself, which calls it. It never prints.
package expiry
