// Package orphans is the orphan-scan benchmark of issue 5: run.sh (the built
// icewright binary against a list+manifests baseline and iceberg-go's
// PlanOrphanFiles at 200k and 2M files) and BenchmarkOrphanScan, which runs
// the same observation in process on a table made by cmd/orphanbench and
// can write a heap profile taken at the peak of the live heap.
package orphans
