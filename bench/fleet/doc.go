// Package fleet holds the fleet plan benchmark (run.sh) and its in-process form (BenchmarkFleetPlan).
package fleet
