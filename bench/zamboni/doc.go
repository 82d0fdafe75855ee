// Package zamboni is the head-to-head against Zamboni (PyPI
// iceberg-zamboni) of issue 27: run.sh times both tools' CLIs on the same
// tables in the same run (compaction binpack, sort and z-order; a
// maintenance run over many small tables; orphan removal) and check.py reads
// the tables back after every run. cmd/zambench builds the many-table lake
// and gives the Go-built catalogs the name Zamboni opens. TestRunSmoke runs
// the script at a tiny size, so CI notices when it stops working with the
// pinned Zamboni; the figures are in docs/benchmarks.md.
package zamboni
