// Package plan is the plan benchmark of issue 3: BenchmarkPlan (in
// process, small) and run.sh (the built icewright binary against iceberg-go's
// CLI on a 200-commit table, and peak RSS on a 100,000-file table). The
// tables are built by benchlake; cmd/planbench builds them for the script.
package plan
