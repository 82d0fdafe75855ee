package orphans

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/catalogs"
	"github.com/icewright/icewright/providers/testkit"
)

// fixedNow is the clock of these tests.
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testSession stands in for providers.Session, which imports this package
// and so cannot serve its tests: the catalogs of a configuration, opened
// through providers/catalogs on first use, on which the scan, the table
// listing and restore run with what the session gives them (the catalog
// block's storage settings, every configured catalog's tables, a table
// reloaded after the listing).
type testSession struct {
	t     testing.TB
	cfg   *config.Config
	cats  map[string]catalog.Catalog
	errs  map[string]error
	spill int // the scan's spill limit; 0: the default
}

func openSession(t testing.TB, cfg *config.Config) *testSession {
	return &testSession{t: t, cfg: cfg, cats: map[string]catalog.Catalog{}, errs: map[string]error{}}
}

// sessionFor is a session over the lakehouses' catalogs.
func sessionFor(t testing.TB, lhs ...*testkit.Lakehouse) *testSession {
	cfg := &config.Config{Dir: lhs[0].Dir}
	for _, l := range lhs {
		cfg.Catalogs = append(cfg.Catalogs, l.ConfigCatalog())
	}
	return openSession(t, cfg)
}

// Close is nothing: the catalogs close with the test.
func (s *testSession) Close() error { return nil }

func (s *testSession) catalog(ctx context.Context, name string) (catalog.Catalog, *config.Catalog, error) {
	for _, cc := range s.cfg.Catalogs {
		if cc.Name != name {
			continue
		}
		if cat, ok := s.cats[name]; ok || s.errs[name] != nil {
			return cat, cc, s.errs[name]
		}
		cat, db, err := catalogs.Open(ctx, s.cfg.Dir, cc)
		if err != nil {
			s.errs[name] = fmt.Errorf("catalog %q: %w", name, err)
			return nil, cc, s.errs[name]
		}
		s.t.Cleanup(func() {
			if db != nil {
				_ = db.Close()
			}
		})
		s.cats[name] = cat
		return cat, cc, nil
	}
	return nil, nil, fmt.Errorf("catalog %q is not configured", name)
}

// LoadTable loads the table at address.
func (s *testSession) LoadTable(ctx context.Context, address string) (*table.Table, error) {
	parts, err := config.SplitLevels(address)
	if err != nil {
		return nil, err
	}
	cat, _, err := s.catalog(ctx, parts[0])
	if err != nil {
		return nil, err
	}
	return cat.LoadTable(ctx, table.Identifier(parts[1:]))
}

// TableLocations reads the tables of every configured catalog by address;
// one that cannot be opened or listed makes the answer an error.
func (s *testSession) TableLocations(ctx context.Context) (*Tables, error) {
	out := map[string]TableLocation{}
	for _, cc := range s.cfg.Catalogs {
		cat, _, err := s.catalog(ctx, cc.Name)
		if err != nil {
			return nil, err
		}
		locs, err := catalogTableLocations(ctx, cat)
		if err != nil {
			return nil, fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
		for k, v := range locs {
			out[cc.Name+"."+k] = v
		}
	}
	return NewTables(out), nil
}

// orphanHooks are the scan's test hooks (Env.afterListing).
type orphanHooks struct {
	afterListing func()
}

// scanOrphans is Scan with the session's environment.
func (s *testSession) scanOrphans(ctx context.Context, pol *config.Effective, tbl *table.Table, hooks orphanHooks) (*diff.OrphanScan, error) {
	_, cc, err := s.catalog(ctx, pol.Catalog)
	if cc == nil {
		return nil, err
	}
	return Scan(ctx, Env{
		Reload:       func(ctx context.Context) (*table.Table, error) { return s.LoadTable(ctx, pol.Address) },
		Storage:      maps.Clone(cc.Properties),
		OtherTables:  s.TableLocations,
		SpillLimit:   s.spill,
		afterListing: hooks.afterListing,
	}, pol, tbl)
}

// RestoreQuarantine is Restore on the session's table.
func (s *testSession) RestoreQuarantine(ctx context.Context, address, runID string) (diff.RestoreResult, error) {
	return Restore(ctx, address, runID, func(ctx context.Context) (*table.Table, error) {
		return s.LoadTable(ctx, address)
	})
}
