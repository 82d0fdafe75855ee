// Package config turns *.iceops.hcl files into a typed configuration. Every
// decoded element keeps the hcl.Range it came from, so diagnostics and
// `iceops explain` can name file:line:col. It also formats files (hclwrite)
// and resolves which effective policy applies to a table address.
//
// It knows nothing of catalogs, tables or plans: it may import only hcl, cty
// and the standard library.
package config
