package providers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/catalogs"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/engine"
	"github.com/icewright/icewright/providers/internal/bound"
)

// Options are what a Session takes from the process. Nothing in providers
// reads the environment or the clock on its own, so tests run at a fixed
// time with a fixed environment.
type Options struct {
	// Env is the environment in os.Environ form. It is kept explicit for
	// providers that need it; iceberg-go's cloud SDKs still read the process
	// environment for their default credential chains.
	Env []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RequestTimeout bounds one storage request attempt without progress
	// and, times the attempts, one catalog call (storage_limits.go); zero
	// means defaultRequestTimeout. A catalog's icewright.request-timeout
	// property overrides it.
	RequestTimeout time.Duration
	// StallLimit is how many storage attempts in a row may make no
	// progress before a table's store is judged unresponsive
	// (WithStorageBreaker); zero means bound.DefaultStallLimit.
	StallLimit int
}

// Session holds the catalogs of one configuration for one command run.
// Catalogs open lazily, once each; an error opening one is cached and
// returned for that catalog's tables only, so one unreachable catalog does
// not stop the others from being planned. A Session is safe for concurrent
// use by the planner's and apply's goroutines.
type Session struct {
	cfg  *config.Config
	opts Options

	mu       sync.Mutex
	catalogs map[string]*catalogEntry
	// locations caches table locations for the nested-table checks of
	// orphan scans and of apply (tableLocations).
	locations *locationCache
	// spill overrides defaultSpillLimit (tests force spilling with it).
	spill int
	// sleep, when set, is the manifest read pacing's pause (tests count
	// the pauses with it); nil waits on a timer.
	sleep func(ctx context.Context, d time.Duration)
	// aws is the S3 configuration with deadlines and retries, built once.
	aws *awsConfigOnce
	// specs remembers which partition types iceberg-go can write manifests
	// of, across the tables observed.
	specs compaction.SpecCheck
	// engines are the engine blocks' engines, opened on first use.
	engines map[string]engine.Engine
	// reloadsShared counts a plan's reloads answered by the table its
	// observation loaded (planReload), for tests.
	reloadsShared atomic.Int64
}

type catalogEntry struct {
	once sync.Once
	cat  catalog.Catalog
	db   *sql.DB // set for sql catalogs: iceberg-go does not close handles it did not open
	err  error
}

// Open prepares a session over cfg's catalogs; nothing is contacted yet.
func Open(cfg *config.Config, opts Options) *Session {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Session{cfg: cfg, opts: opts, catalogs: map[string]*catalogEntry{}}
}

func (s *Session) now() time.Time { return s.opts.Now() }

func (s *Session) catalogConfig(name string) (*config.Catalog, error) {
	for _, c := range s.cfg.Catalogs {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("catalog %q is not configured", name)
}

// Catalog returns the named catalog, opening it on first use.
func (s *Session) Catalog(ctx context.Context, name string) (catalog.Catalog, error) {
	cc, err := s.catalogConfig(name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	e, ok := s.catalogs[name]
	if !ok {
		e = &catalogEntry{}
		s.catalogs[name] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		// Opening a REST catalog is its first call (GET /v1/config):
		// bounded and repeated like any read, so that a catalog that
		// accepts and never answers fails its own tables, not the run.
		e.err = bound.Read(bound.With(ctx, s.catalogTimeout(name)), func(ctx context.Context) error {
			var err error
			e.cat, e.db, err = catalogs.Open(ctx, s.cfg.Dir, cc)
			return err
		})
		if e.err != nil {
			e.err = fmt.Errorf("catalog %q: %w", name, e.err)
		}
	})
	return e.cat, e.err
}

// SQLCatalogNames is the catalog_name values that a SQL catalog's database
// holds tables under, sorted. iceberg-go's SQL catalog reads only the rows
// of its own name (the catalog's label), so this is what a label that
// lists nothing could have been.
func (s *Session) SQLCatalogNames(ctx context.Context, catalogName string) ([]string, error) {
	db, err := s.sqlDB(ctx, catalogName)
	if err != nil {
		return nil, err
	}
	names, err := catalogs.SQLCatalogNames(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: read catalog names: %w", catalogName, err)
	}
	return names, nil
}

// sqlDB is the database of a SQL catalog.
func (s *Session) sqlDB(ctx context.Context, catalogName string) (*sql.DB, error) {
	if _, err := s.Catalog(ctx, catalogName); err != nil {
		return nil, err
	}
	s.mu.Lock()
	db := s.catalogs[catalogName].db
	s.mu.Unlock()
	if db == nil {
		return nil, fmt.Errorf("catalog %q is not a SQL catalog", catalogName)
	}
	return db, nil
}

// sqlTableRows reads every row of a SQL catalog's iceberg_tables, whatever
// its catalog_name (catalogs.SQLTableRows).
func (s *Session) sqlTableRows(ctx context.Context, catalogName string) ([]catalogs.SQLTableRow, error) {
	db, err := s.sqlDB(ctx, catalogName)
	if err != nil {
		return nil, err
	}
	rows, err := catalogs.SQLTableRows(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: read its database's tables: %w", catalogName, err)
	}
	return rows, nil
}

// Close closes every catalog that was opened.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for name, e := range s.catalogs {
		if e.cat != nil {
			if c, ok := e.cat.(catalog.Closer); ok {
				if err := c.Close(); err != nil {
					errs = append(errs, fmt.Errorf("close catalog %q: %w", name, err))
				}
			}
		}
		if e.db != nil {
			if err := e.db.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close catalog %q database: %w", name, err))
			}
		}
	}
	s.catalogs = map[string]*catalogEntry{}
	for name, e := range s.engines {
		if err := e.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close engine %q: %w", name, err))
		}
	}
	s.engines = nil
	return errors.Join(errs...)
}

// splitAddress splits "catalog.ns1.ns2.table" into the catalog name and the
// iceberg identifier (namespace levels and table name).
// The structure rule is config.SplitLevels, the one rule both share.
func splitAddress(address string) (string, table.Identifier, error) {
	parts, err := config.SplitLevels(address)
	if err != nil {
		return "", nil, err
	}
	return parts[0], table.Identifier(parts[1:]), nil
}

// joinAddress is the inverse of splitAddress.
func joinAddress(catalogName string, ident table.Identifier) string {
	return catalogName + "." + strings.Join(ident, ".")
}

// loadTable loads the table at address ("catalog.ns.table") from its
// catalog.
func (s *Session) loadTable(ctx context.Context, address string) (*table.Table, error) {
	catName, ident, err := splitAddress(address)
	if err != nil {
		return nil, err
	}
	cat, err := s.Catalog(ctx, catName)
	if err != nil {
		return nil, err
	}
	var tbl *table.Table
	err = bound.Read(bound.With(s.WithStorageLimits(ctx), s.catalogTimeout(catName)), func(ctx context.Context) error {
		var err error
		tbl, err = cat.LoadTable(ctx, ident)
		return err
	})
	if err != nil {
		return nil, loadError(address, catName, err)
	}
	return tbl, nil
}

// loadError is the error of a failed load of the table at address from
// catalog catName.
func loadError(address, catName string, err error) error {
	if errors.Is(err, catalog.ErrNoSuchTable) {
		// iceberg-go's message ends in the identifier as a Go slice
		// ("table does not exist: [analytics evnts]").
		return fmt.Errorf("load %s: %w in catalog %q", address, catalog.ErrNoSuchTable, catName)
	}
	return fmt.Errorf("load %s: %w", address, err)
}

// ListTables returns the address of every table of the catalog, sorted.
func (s *Session) ListTables(ctx context.Context, catalogName string) ([]string, error) {
	cat, err := s.Catalog(ctx, catalogName)
	if err != nil {
		return nil, err
	}
	var out []string
	err = catalogs.Walk(bound.With(ctx, s.catalogTimeout(catalogName)), cat, func(ident table.Identifier) error {
		out = append(out, joinAddress(catalogName, ident))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", catalogName, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
