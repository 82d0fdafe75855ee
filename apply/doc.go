// Package apply runs iceops: it plans every managed table (observe through
// providers, diff each, in parallel) and executes a plan: re-observe,
// staleness checks against a saved plan, action ordering, optimistic commits
// with bounded retries, progress hooks and results. It never prints; it
// returns values and calls hooks.
//
// It may import diff, config and providers.
package apply
