package fleet_test

import (
	"context"
	"flag"
	"runtime/debug"
	"testing"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// fleetCfg is the configuration directory bench/fleet/run.sh writes beside
// a fleet (CACHE/fleet-N/cfg); empty skips. For profiles of the plan of a
// fleet in process: go test ./bench/fleet -bench . -fleet.cfg DIR -cpuprofile cpu.out
var fleetCfg = flag.String("fleet.cfg", "", "configuration directory of a fleet made by bench/fleet/run.sh")

// BenchmarkFleetPlan plans every table of the fleet, as `icewright plan` does.
func BenchmarkFleetPlan(b *testing.B) {
	if *fleetCfg == "" {
		b.Skip("needs -fleet.cfg (bench/fleet/run.sh makes the fleet)")
	}
	cfg, diags := config.Load(*fleetCfg, config.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	for b.Loop() {
		sess := providers.Open(cfg, providers.Options{})
		// The soft memory limit the CLI sets while it observes (its
		// collections are part of what the plan costs).
		p, err := apply.Plan(context.Background(), cfg, sess, apply.PlanOptions{SetMemoryLimit: debug.SetMemoryLimit})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Errors) > 0 {
			b.Fatalf("plan errors: %v", p.Errors)
		}
		_ = sess.Close()
	}
}
