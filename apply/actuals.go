package apply

import (
	"context"
	"sync"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// What an action really did (docs/cost.md, Actuals): its storage work is
// counted by a providers.Meter the action's context carries, its CPU time
// by the cpuClock below. A batch of actions sharing one commit is counted
// once, on its first action.

// cpuClock apportions the process's CPU time (getrusage) among the actions
// running at once: whenever one starts or stops, the CPU time used since
// the last such moment is split equally among those that were running. An
// action that ran alone, in a run that applies one table at a time in a
// process doing nothing else (not ApplyOptions.CPUShared), gets exactly
// the process's CPU time while it ran; any other share is approximate
// (ActionResult.ActualCPUApproximate).
type cpuClock struct {
	read func() (float64, bool)

	mu      sync.Mutex
	last    float64
	running map[*cpuShare]struct{}
}

// cpuShare is one action's share of the CPU time.
type cpuShare struct {
	seconds float64
	shared  bool // another action ran at the same time
}

func newCPUClock(read func() (float64, bool)) *cpuClock {
	return &cpuClock{read: read, running: map[*cpuShare]struct{}{}}
}

// processClock is the one cpuClock of the process: CPU time is the
// process's, so actions of concurrent Apply calls (the reconciler's
// workers) share it too.
var processClock = newCPUClock(processCPU)

// start begins an action's share; nil when CPU time cannot be read.
func (c *cpuClock) start() *cpuShare {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.settle() {
		return nil
	}
	s := &cpuShare{}
	c.running[s] = struct{}{}
	if len(c.running) > 1 {
		for o := range c.running {
			o.shared = true
		}
	}
	return s
}

// stop ends s and returns its CPU seconds.
func (c *cpuClock) stop(s *cpuShare) float64 {
	if s == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	delete(c.running, s)
	return s.seconds
}

// settle splits the CPU time since the last moment among the running
// shares.
func (c *cpuClock) settle() bool {
	now, ok := c.read()
	if !ok {
		return false
	}
	if n := len(c.running); n > 0 {
		d := (now - c.last) / float64(n)
		for s := range c.running {
			s.seconds += d
		}
	}
	c.last = now
	return true
}

// actual counts one batch's work: its meter (nil when the table's storage
// is not metered) and its CPU share.
type actual struct {
	meter *providers.Meter
	cpu   *cpuShare
	clock *cpuClock
}

// startActual returns ctx carrying the batch's meter, and the count.
func (r *runner) startActual(ctx context.Context, tbl *providers.Table) (context.Context, *actual) {
	a := &actual{clock: r.cpu}
	if tbl.Metered() {
		ctx, a.meter = providers.WithMeter(ctx)
	}
	a.cpu = r.cpu.start()
	return ctx, a
}

// done ends the count: the usage (nil when the storage is not metered) and
// whether its CPU time is approximate.
func (a *actual) done(r *runner, bytesFreed int64) (*diff.Usage, bool) {
	cpu := a.clock.stop(a.cpu)
	if a.meter == nil {
		return nil, false
	}
	u := providers.MeterUsage(a.meter)
	u.BytesFreed = bytesFreed
	u.CPUSeconds = cpu
	return &u, a.cpu != nil && (a.cpu.shared || !r.oneTableAtATime || r.opts.CPUShared)
}

// approvedEstimate is the approved plan's estimate of the action of type
// typ, copied (nil when none).
func approvedEstimate(actions []diff.Action, typ diff.ActionType) *diff.Usage {
	for _, a := range actions {
		if a.Type == typ && a.Estimate != nil {
			e := *a.Estimate
			return &e
		}
	}
	return nil
}

// addActual is the actual of an action run again (after a commit
// conflict): both attempts' work.
func addActual(old, ar *ActionResult) (*diff.Usage, bool) {
	if old.Actual == nil {
		return ar.Actual, ar.ActualCPUApproximate
	}
	if ar.Actual == nil {
		return old.Actual, old.ActualCPUApproximate
	}
	u := *old.Actual
	u.Add(*ar.Actual)
	return &u, old.ActualCPUApproximate || ar.ActualCPUApproximate
}

// freedBy is the storage an action released, for its actual: what a
// deletion deleted (its own count: a delete request does not say how big
// its object was), or for a committed rewrite, whose old files are freed
// once the snapshots holding them expire, its files' bytes before less
// after (Usage.BytesFreed).
func freedBy(er providers.ExecResult) int64 {
	if er.BytesFreed == 0 && er.Committed && er.BytesBefore > er.BytesAfter {
		return er.BytesBefore - er.BytesAfter
	}
	return er.BytesFreed
}

// otherTablesCost is the run's read of other tables' references: the
// plan's estimate beside what m counted (nil when neither has anything).
func otherTablesCost(plan *diff.Plan, m *providers.Meter) *RunCost {
	var rc RunCost
	if e := plan.Summary.OtherTablesReferences; e != (diff.Usage{}) {
		rc.Estimate = &e
	}
	if u := providers.MeterUsage(m); u != (diff.Usage{}) {
		rc.Actual = &u
	}
	if rc.Estimate == nil && rc.Actual == nil {
		return nil
	}
	return &rc
}
