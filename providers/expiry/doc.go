// Package expiry is the home of the expire_snapshots action kind
// (diff/expire.go decides it): the estimate a plan shows (Estimate and
// EstimateTable, from walks of their own, or Index, recorded on the plan's
// one manifest walk; diff.TablePlan.EstimateExpiry decides what the figures
// refuse), the execution apply runs (Expire: exactly the planned snapshots
// and refs in one commit, then the files reachable before and not after),
// and Kind, its registration (kind.Kind), built with the session's answer
// to which other table references a file.
//
// It may import diff, config, providers/internal (reach, store, bound) and
// providers/kind, iceberg-go; never providers itself, which calls it. It
// never prints.
package expiry
