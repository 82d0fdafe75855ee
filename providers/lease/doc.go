// Package lease is a table's lease (docs/design.md §5.4, Locking): one
// apply's hold on a table while it works on it, kept as objects in the
// table's own storage under <location>/_icewright_lock/, written with each
// store's create-if-absent write, never a metadata commit. Store is a
// table's lock directory (Open) with Acquire, Renew, Release, Current and
// ReleaseRun (force-unlock). providers holds the session's entry points
// (TakeLease, TableLease, ForceUnlock) and names Lease, LockedError,
// ErrLockLost and ErrNoLease for apply.
//
// It imports providers/internal (store) and iceberg-go's and gocloud's
// storage; never providers. It never prints.
package lease
