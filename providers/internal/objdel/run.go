package objdel

import (
	"context"
	"sync"
	"time"

	"github.com/icewright/icewright/providers/internal/bound"
)

// Settings pace a run: how many locations one batch holds (capped at the
// store's MaxBatch), how many requests are in flight at once (batches on a
// store with a batch API, single deletes on one without), and how long
// a worker waits after a batch before it sends the next, so shared storage
// is not overwhelmed (zero values: the defaults).
type Settings struct {
	BatchSize   int
	Concurrency int
	Cooldown    time.Duration
	// StopAtOnce makes a done ctx stop a store that deletes one location
	// per request within the batch under way too (expiry's second
	// interrupt); without it the batch finishes (an interrupt of the
	// orphan sweep). A store judged unresponsive stops within the batch
	// either way, and a batch request once sent is never cut.
	StopAtOnce bool
}

// DefaultConcurrency is the number of batches in flight by default.
const DefaultConcurrency = 4

// Hooks are a run's callbacks. Check runs for each location of a batch
// right before that batch is sent (the caller's last re-check, so batching
// widens no window): it returns the name to delete, or false when the
// location must not be deleted (the caller accounts for it). Done reports
// a sent location's outcome (nil: gone); Left one never sent because the
// run stopped. Done and Left are serialised; Check may run concurrently
// for different batches.
type Hooks struct {
	Check func(i int) (name string, ok bool)
	Done  func(i int, err error)
	Left  func(i int, err error)
}

// Run deletes locs through st in batches. Before each batch it stops if
// ctx is done or the store was judged unresponsive (bound.Stop): every
// location not yet sent goes to Left and Run returns why (also when a
// store stopped sending within a batch: ErrNotSent). A request once sent
// is not cut by ctx (it still ends within its own bounds and the
// breaker's): its outcome is known and reported.
func Run(ctx context.Context, st Store, locs []string, set Settings, h Hooks) (stopped error) {
	st, size, conc := pace(st, set)
	r := &batchRun{ctx: ctx, st: st, locs: locs, size: size, set: set, h: h}
	var wg sync.WaitGroup
	for range min(conc, (len(locs)+size-1)/size) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work()
		}()
	}
	wg.Wait()
	return r.stopped
}

// pace is the store a run sends through, its batch size and the batches
// in flight: a store of one request per location (eachStore) runs one
// batch at a time, Concurrency bounding the requests in flight, so that
// an interruption stops at a batch boundary.
func pace(st Store, set Settings) (Store, int, int) {
	size := st.MaxBatch()
	if set.BatchSize > 0 && set.BatchSize < size {
		size = set.BatchSize
	}
	conc := set.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	if e, ok := st.(eachStore); ok {
		if set.Concurrency > 0 {
			e.conc = set.Concurrency
		}
		e.stopAtOnce = set.StopAtOnce
		return e, size, 1
	}
	return st, size, conc
}

// batchRun is one Run in progress, shared by its workers.
type batchRun struct {
	ctx  context.Context
	st   Store
	locs []string
	size int
	set  Settings
	h    Hooks

	mu      sync.Mutex
	next    int   // the first location not yet taken by a worker
	stopped error // why the run stopped before the end
}

// work sends batches until none is left or the run stops, waiting the
// cooldown between two.
func (r *batchRun) work() {
	for first := true; ; first = false {
		if !first && r.set.Cooldown > 0 {
			select {
			case <-r.ctx.Done():
			case <-time.After(r.set.Cooldown):
			}
		}
		lo, hi, ok := r.take()
		if !ok {
			return
		}
		var idx []int
		var names []string
		for i := lo; i < hi; i++ {
			name := r.locs[i]
			if r.h.Check != nil {
				n, ok := r.h.Check(i)
				if !ok {
					continue
				}
				name = n
			}
			idx = append(idx, i)
			names = append(names, name)
		}
		if len(names) == 0 {
			continue
		}
		errs := r.st.Delete(r.ctx, names)
		for j, i := range idx {
			r.report(i, errs[j], true)
		}
	}
}

// report hands one location's outcome to the hooks.
func (r *batchRun) report(i int, err error, sent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ns, ok := err.(notSent); ok && r.stopped == nil {
		r.stopped = ns.cause // the store stopped the run within a batch
	}
	switch {
	case !sent && r.h.Left != nil:
		r.h.Left(i, err)
	case sent && r.h.Done != nil:
		r.h.Done(i, err)
	}
}

// take hands a worker the next batch, or none once all are taken or the
// run has stopped (then the rest are Left, once).
func (r *batchRun) take() (int, int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next >= len(r.locs) {
		return 0, 0, false
	}
	if err := bound.Stop(r.ctx); err != nil {
		if r.stopped == nil {
			r.stopped = err
		}
		for i := r.next; i < len(r.locs); i++ {
			if r.h.Left != nil {
				r.h.Left(i, err)
			}
		}
		r.next = len(r.locs)
		return 0, 0, false
	}
	lo, hi := r.next, min(r.next+r.size, len(r.locs))
	r.next = hi
	return lo, hi, true
}

// RunGrouped runs Run once per group of locs (groupOf names a location's
// group: its bucket, or the root it was listed under), in the order the
// groups first appear, each through the store open gives for it; the
// hooks' indices are into locs. A group whose store cannot be opened has
// each location Done with ErrNotSent and that error (still in place).
func RunGrouped(ctx context.Context, locs []string, groupOf func(i int) string, open func(group string) (Store, error), set Settings, h Hooks) (stopped error) {
	groups := map[string][]int{}
	var order []string
	for i := range locs {
		g := groupOf(i)
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	for _, g := range order {
		idx := groups[g]
		st, err := open(g)
		if err != nil {
			for _, i := range idx {
				if h.Done != nil {
					h.Done(i, notSent{err})
				}
			}
			if stopped == nil {
				stopped = err
			}
			continue
		}
		sub := make([]string, len(idx))
		for j, i := range idx {
			sub[j] = locs[i]
		}
		var gh Hooks
		if h.Check != nil {
			gh.Check = func(j int) (string, bool) { return h.Check(idx[j]) }
		}
		if h.Done != nil {
			gh.Done = func(j int, err error) { h.Done(idx[j], err) }
		}
		if h.Left != nil {
			gh.Left = func(j int, err error) { h.Left(idx[j], err) }
		}
		if err := Run(ctx, st, sub, set, gh); err != nil && stopped == nil {
			stopped = err
		}
	}
	return stopped
}
