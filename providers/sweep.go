package providers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/orphans"
)

// The session's side of the orphan sweep (providers/orphans): the scan's
// environment (its catalogs, storage settings and the other tables), and
// restore.

// scanOrphans runs the orphan scan of pol's table with this session's
// catalogs and storage settings; ride, when set, rides on its reference
// walk (Observe).
func (s *Session) scanOrphans(ctx context.Context, pol *config.Effective, tbl *table.Table, ride *orphans.Ride) (*diff.OrphanScan, error) {
	catName, _, err := splitAddress(pol.Address)
	if err != nil {
		return nil, err
	}
	storage, err := s.storageProperties(catName)
	if err != nil {
		return nil, err
	}
	return orphans.Scan(ctx, orphans.Env{
		Reload:      func(ctx context.Context) (*table.Table, error) { return s.loadTable(ctx, pol.Address) },
		Storage:     storage,
		OtherTables: s.tableLocations,
		SpillLimit:  s.spill,
		Ride:        ride,
	}, pol, tbl)
}

// recheckOrphans is apply's re-check of a sweep (orphans.Spec.Recheck):
// the plan's scan and the plan's rules, again, on the table as it is now.
func (s *Session) recheckOrphans(ctx context.Context, pol *config.Effective, tbl *table.Table, now time.Time) (*diff.OrphansAction, error) {
	scan, err := s.scanOrphans(ctx, pol, tbl, nil)
	if err != nil {
		return nil, fmt.Errorf("orphan scan: %w", err)
	}
	st := observeMetadata(tbl, pol.Address, &s.specs)
	st.Orphans = scan
	act, refusal := diff.RecheckOrphans(pol, st, now)
	if refusal != "" {
		return nil, fmt.Errorf("%w: %s", store.ErrRefused, refusal)
	}
	return act, nil
}

// RestoreQuarantine moves every file of one quarantine run of address back
// to its original path (orphans.Restore).
func (s *Session) RestoreQuarantine(ctx context.Context, address, runID string) (diff.RestoreResult, error) {
	// A breaker for the run, as apply has per table: a store that stops
	// answering ends the restore at once, each file left refused.
	ctx = WithStorageBreaker(s.WithStorageLimits(ctx))
	return orphans.Restore(ctx, address, runID, func(ctx context.Context) (*table.Table, error) {
		return s.loadTable(ctx, address)
	})
}

// storageProperties are the storage settings of a configured catalog (its
// block's properties), for sweep roots outside the table location's
// storage.
func (s *Session) storageProperties(catalogName string) (map[string]string, error) {
	c, err := s.catalogConfig(catalogName)
	if err != nil {
		return nil, err
	}
	return maps.Clone(c.Properties), nil
}

// tableLocations lists every table of every configured catalog with its
// location, keyed by address: the orphan sweep's OtherTables, in plan and
// apply. Any catalog that cannot be listed makes the answer unknown (an
// error).
//
// It runs right before each table's deletions, so it must see tables
// created during the apply, but loading every table of every catalog for
// each table checked costs a metadata read per table each time. So the
// identifiers are listed afresh at every call (catalog listings only: a
// table created since the last call is loaded and caught), while a table
// already loaded in this session is not loaded again: its location is
// taken as it was then. What this does not see is an existing table moved
// during the apply (ALTER TABLE ... SET LOCATION, or dropped and recreated
// under the same name elsewhere); files such a table writes there are
// younger than the age guard, and the next plan's check sees it.
func (s *Session) tableLocations(ctx context.Context) (map[string]orphans.TableLocation, error) {
	s.mu.Lock()
	if s.locations == nil {
		s.locations = &locationCache{byAddr: map[string]orphans.TableLocation{}}
	}
	lc := s.locations
	s.mu.Unlock()
	// One check at a time: the first loads every table once, the others
	// then only list.
	lc.mu.Lock()
	defer lc.mu.Unlock()
	out := map[string]orphans.TableLocation{}
	for _, c := range s.cfg.Catalogs {
		addrs, err := s.ListTables(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if tl, ok := lc.byAddr[a]; ok {
				out[a] = tl
				continue
			}
			t, err := s.loadTable(ctx, a)
			if errors.Is(err, catalog.ErrNoSuchTable) {
				continue // dropped since it was listed
			}
			if err != nil {
				return nil, fmt.Errorf("catalog %q: %w", c.Name, err)
			}
			tl := orphans.LocationOf(t)
			lc.byAddr[a], out[a] = tl, tl
			lc.loads++
		}
	}
	return out, nil
}

// locationCache is the apply-time table locations of one session.
type locationCache struct {
	mu     sync.Mutex
	byAddr map[string]orphans.TableLocation
	loads  int // tables loaded, for tests
}
