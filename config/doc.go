// Package config turns *.icewright.hcl files into a typed configuration. Every
// decoded element keeps the hcl.Range it came from, so diagnostics and
// `icewright explain` can name file:line:col. It also formats files (hclwrite)
// and resolves which effective policy applies to a table address.
//
// It knows nothing of catalogs, tables or plans: it may import only hcl, cty
// and the standard library.
//
// The flow is Load (parse every file, decode variables, then locals, then
// catalogs, policies, table and tables blocks, then the cross-block checks:
// references, extends cycles, selector overlap, merged-policy lint) and
// Resolve (pick the block for an address, merge its policy chain attribute
// by attribute, fill defaults, derive the table properties it owns).
//
// Choices a reader of a plan may want to know:
//   - Variables take their value from, lowest first: the default,
//     ICEWRIGHT_VAR_name, each -var-file in order, each -var in order. Text from
//     the command line or environment is literal for untyped and primitive
//     variables and an HCL expression for collection types, as in Terraform.
//     -var-file paths are relative to the configuration directory.
//   - env(NAME) of an unset variable is a load error naming it;
//     env(NAME, DEFAULT) gives the default, env(NAME, "") allows it unset.
//     file(PATH) reads at
//     most 4 MiB of a regular file relative to path.root.
//   - Defaults are fillDefaults' (resolve.go); docs/configuration.md lists
//     them with every attribute, generated from policyFields and the tables
//     in reference.go. A nested block that no block in the chain declares
//     means that maintenance does not run (Declared false).
//   - Derived properties record only attributes some block set: a default is
//     not a decision, so icewright never takes over a property nobody named.
//   - Address globs: `*` within one level, `**` as a whole level for any
//     number of levels (including none). Exclude patterns are whole-address
//     globs too.
//   - The digest covers file names, contents and resolved variable values,
//     but not env(): credentials rotate without changing any policy.
package config

//go:generate go test -run ^TestReference$ -update
