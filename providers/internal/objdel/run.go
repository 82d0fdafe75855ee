package objdel

import (
	"context"
	"sync"
	"time"

	"github.com/iceops/iceops/providers/internal/bound"
)

// Settings pace a run: how many locations one batch holds (capped at the
// store's MaxBatch), how many batches are in flight at once, and how long
// a worker waits after a batch before it sends the next, so shared storage
// is not overwhelmed (zero values: the defaults).
type Settings struct {
	BatchSize   int
	Concurrency int
	Cooldown    time.Duration
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
// location not yet sent goes to Left and Run returns why. A batch once sent
// is not cut by an interrupt (its requests still end within their own
// bounds and the breaker's): its outcome is known and reported.
func Run(ctx context.Context, st Store, locs []string, set Settings, h Hooks) (stopped error) {
	size := st.MaxBatch()
	if set.BatchSize > 0 && set.BatchSize < size {
		size = set.BatchSize
	}
	conc := set.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	var (
		mu   sync.Mutex
		next int // the first location not yet taken by a worker
		wg   sync.WaitGroup
	)
	report := func(i int, err error, sent bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !sent && h.Left != nil:
			h.Left(i, err)
		case sent && h.Done != nil:
			h.Done(i, err)
		}
	}
	// take hands a worker the next batch, or none once all are taken or
	// the run has stopped (then the rest are Left, once).
	take := func() (int, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(locs) {
			return 0, 0, false
		}
		if err := bound.Stop(ctx); err != nil {
			if stopped == nil {
				stopped = err
			}
			for i := next; i < len(locs); i++ {
				if h.Left != nil {
					h.Left(i, err)
				}
			}
			next = len(locs)
			return 0, 0, false
		}
		lo, hi := next, min(next+size, len(locs))
		next = hi
		return lo, hi, true
	}
	send := context.WithoutCancel(ctx)
	for range min(conc, (len(locs)+size-1)/size) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; ; first = false {
				if !first && set.Cooldown > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(set.Cooldown):
					}
				}
				lo, hi, ok := take()
				if !ok {
					return
				}
				var idx []int
				var names []string
				for i := lo; i < hi; i++ {
					name := locs[i]
					if h.Check != nil {
						n, ok := h.Check(i)
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
				errs := st.Delete(send, names)
				for j, i := range idx {
					report(i, errs[j], true)
				}
			}
		}()
	}
	wg.Wait()
	return stopped
}
