// Package doctor is `icewright doctor` (docs/design.md §1): Run checks
// what icewright needs of each configured catalog, its storage and its
// tables, and of each engine block's endpoint, one diff.DoctorFinding per
// check with what to do, never a secret's value.
//
// Where things are:
//   - doctor.go: Run, a catalog's checks (it answers within its deadline,
//     the names it shares its database with, the storage probe: write,
//     list, read and delete of an object under the lease directory, and the
//     clock skew), and each selected table's limits (the plan's
//     observation, diff.TableLimits);
//   - credentials.go: where the storage credentials come from and how
//     icewright authenticates to the catalog, by the setting's name only;
//   - engines.go: each engine block's probe (providers/engine).
//
// What differs by catalog type (its authentication, the advice when it
// cannot be reached, whether its warehouse may be probed, whether it vends
// credentials) is the type's descriptor in providers/catalogs.
//
// It reports on a providers.Session and adds nothing to it; cmd calls it.
// It may import diff, config and providers with its subpackages. It never
// prints.
package doctor
