package objdel

import (
	"context"
	"errors"
	iofs "io/fs"
	"sync"

	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/meter"
)

// eachConcurrency is how many single deletes a one-by-one Store runs at
// once within a batch by default (Settings.Concurrency sets it): a local
// disk, or a store without a batch API.
const eachConcurrency = 8

// eachBatch is the batch of a one-by-one Store: the unit at which a run
// re-checks and stops, not a request.
const eachBatch = 1000

// openLocal deletes local files with bounded concurrency, under the names
// iceberg-go's LocalFS gives them (file:///p and /p alike), so a location
// means the same file to the table's IO and here.
// Each delete is counted in ctx's meter, if any (meter.Local).
func openLocal(ctx context.Context, _ map[string]string, _ string) (Store, error) {
	return OneByOne(meter.Local(ctx).Remove), nil
}

// OneByOne is the Store of a store without a batch API: each location goes
// through remove (the table's IO), eachConcurrency at a time.
func OneByOne(remove func(string) error) Store { return eachStore{remove: remove} }

type eachStore struct {
	remove     func(string) error
	conc       int  // 0: eachConcurrency
	stopAtOnce bool // Settings.StopAtOnce
}

func (eachStore) MaxBatch() int { return eachBatch }

func (s eachStore) Delete(ctx context.Context, locs []string) []error {
	errs := make([]error, len(locs))
	conc := s.conc
	if conc <= 0 {
		conc = eachConcurrency
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, l := range locs {
		sem <- struct{}{}
		// Each delete is a request of its own: none starts once the store
		// is judged unresponsive (or, with stopAtOnce, the run is
		// stopped), within the batch too.
		err := bound.BreakerOf(ctx).Err()
		if s.stopAtOnce && err == nil {
			err = bound.Stop(ctx)
		}
		if err != nil {
			<-sem
			for j := i; j < len(locs); j++ {
				errs[j] = notSent{err}
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.remove(l); err != nil && !errors.Is(err, iofs.ErrNotExist) {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errs
}
