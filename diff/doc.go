// Package diff is the pure heart of icewright: (effective policy, observed table
// state, now) → table plan. It owns the observed-state types that providers
// fill and the plan types that apply executes and views render.
//
// It does no I/O and never imports iceberg-go, arrow-go or an I/O package; it
// may import only config, hcl (for ranges) and the standard library. The
// clock is a parameter, so every result is reproducible in a test.
package diff
