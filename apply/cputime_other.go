//go:build !unix

package apply

// processCPU: no CPU time where getrusage is missing; actuals then have
// none (docs/cost.md, Actuals).
func processCPU() (float64, bool) { return 0, false }
