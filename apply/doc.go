// Package apply runs icewright: it plans every managed table (observe through
// providers, diff each, in parallel) and executes a plan: re-observe,
// staleness checks against a saved plan, action ordering, optimistic commits
// with bounded retries, progress hooks and results. It never prints; it
// returns values and calls hooks.
//
// The safety model of Apply (docs/design.md §5.3–5.5):
//
//   - A saved plan is read by planfile.Read, which refuses anything icewright did
//     not write as is (truncated, another major version, unknown fields,
//     inconsistent payloads, content not matching the plan's checksum).
//   - Before anything changes, the plan is refused when the configuration
//     digest differs or any table's UUID differs (dropped and recreated).
//   - A table unchanged since the plan runs exactly the approved actions. A
//     changed one is re-observed and re-planned; the fresh plan is bounded by
//     the approved one (bound): destructive actions keep only approved
//     snapshot ids, refs and paths that still qualify, non-destructive ones
//     are recomputed, kinds the approval lacks are skipped and reported.
//   - Every action runs on the table as the catalog holds it at that moment
//     and commits asserting it has not moved (compaction may instead be
//     rebased by iceberg-go over concurrent appends, with its conflict
//     validation). Expiry re-checks each listed snapshot on the exact version
//     it commits against and deletes only what the re-read metadata no longer
//     reaches; orphan removal re-stats each listed path and then builds the
//     referenced set. A conflict reloads and retries, a bounded number of
//     times with backoff; an unknown commit outcome stops the table and keeps
//     every staged file.
//
// It may import diff, config and providers.
package apply
