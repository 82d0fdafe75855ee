package compaction

import (
	"context"
	"math"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// processBaseline is the part of ProcessMemoryLimit that is not the
// engine's: the catalog, planning and the runtime. Compactions running at
// once in one process share it.
const processBaseline = 32 << 20

// MemoryLimiter keeps a process's Go soft memory limit sized for the
// compactions running in it at the moment: the baseline once plus each
// running compaction's own share of ProcessMemoryLimit. The first Hold
// saves the limit in force and the last release restores it. It never
// raises the limit above the one in force before the first Hold, so a
// limit the user set stays the ceiling. set is
// runtime/debug.SetMemoryLimit (a main passes it: process-wide state is
// main's alone); a nil *MemoryLimiter does nothing.
type MemoryLimiter struct {
	set func(int64) int64

	mu     sync.Mutex
	active int
	engine int64 // sum of the running compactions' shares
	prev   int64 // the limit before the first Hold
}

// NewMemoryLimiter returns a limiter that changes the limit through set.
func NewMemoryLimiter(set func(int64) int64) *MemoryLimiter {
	return &MemoryLimiter{set: set}
}

// Hold raises the limit by what a compaction of groups of tbl with o
// needs, until the returned release is called (exactly once).
func (m *MemoryLimiter) Hold(tbl *table.Table, groups []Group, o Options) (release func(), err error) {
	if m == nil || m.set == nil {
		return func() {}, nil
	}
	limit, err := ProcessMemoryLimit(tbl, groups, o)
	if err != nil {
		return nil, err
	}
	share := limit - processBaseline
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == 0 {
		m.prev = m.set(-1)
	}
	m.active++
	m.engine += share
	m.apply()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.active--
			m.engine -= share
			if m.active == 0 {
				m.set(m.prev)
				return
			}
			m.apply()
		})
	}, nil
}

// apply sets baseline + the running shares, capped by the limit before.
func (m *MemoryLimiter) apply() {
	want := int64(math.MaxInt64)
	if m.engine < math.MaxInt64-processBaseline {
		want = processBaseline + m.engine
	}
	m.set(min(want, m.prev))
}

// memoryGate admits groups while their estimated needs fit the run's
// budget together. A need larger than the whole budget is admitted alone,
// so every group runs eventually; admission is first come, first served.
type memoryGate struct {
	total int64

	mu      sync.Mutex
	used    int64
	running int
	changed chan struct{} // closed and replaced on every release
}

func newMemoryGate(total int64) *memoryGate {
	return &memoryGate{total: total, changed: make(chan struct{})}
}

// acquire waits until need fits (or nothing runs); ctx's error if it ends
// first.
func (g *memoryGate) acquire(ctx context.Context, need int64) error {
	for {
		g.mu.Lock()
		if g.running == 0 || g.used+need <= g.total {
			g.used += need
			g.running++
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (g *memoryGate) release(need int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= need
	g.running--
	close(g.changed)
	g.changed = make(chan struct{})
}
