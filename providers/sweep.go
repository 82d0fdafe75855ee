package providers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/meter"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/orphans"
	"github.com/icewright/icewright/providers/tablestate"
)

// The tables the run can see (tableLocations, plannedTables,
// tableReferences: the orphan sweep's and expiry's other tables), and the
// session's side of the orphan sweep (providers/orphans): its Kind with the
// session's loaders, and restore.

// orphanKind is the orphan sweep's home with this session's loaders, its
// fresh listing of the other tables and its metadata observation.
func (s *Session) orphanKind() orphans.Kind {
	return orphans.Kind{
		Reload:      s.loadTable,
		OtherTables: s.tableLocations,
		Metadata: func(tbl *table.Table, address string) *diff.TableState {
			return tablestate.Metadata(tbl, address, &s.specs)
		},
		SpillLimit: s.spill,
		Storage: func(address string) (map[string]string, error) {
			catName, _, err := splitAddress(address)
			if err != nil {
				return nil, err
			}
			return s.storageProperties(catName)
		},
	}
}

// scanOrphans runs the orphan scan of pol's table (orphans.Kind.Scan)
// with this session's catalogs and storage settings; ride, when set, rides
// on its reference walk (Observe). others is the other tables it checks
// against: a plan's listing (plannedTables) or a fresh one
// (tableLocations, apply's re-check).
//
// It is a plan's scan (observe, inspect): its reload after the listing is
// planReload, which hands back tbl itself while the catalog still names
// tbl's metadata file. Apply's re-check scans through orphanKind, whose
// reload is always a fresh load.
func (s *Session) scanOrphans(ctx context.Context, pol *config.Effective, tbl *table.Table, ride *orphans.Ride, others func(context.Context) (*orphans.Tables, error)) (*diff.OrphanScan, error) {
	k := s.orphanKind()
	k.Reload = func(ctx context.Context, address string) (*table.Table, error) {
		return s.planReload(ctx, address, tbl)
	}
	return k.Scan(ctx, s.kindEnv(pol, s.now), tbl, ride, others)
}

// planReload is a plan's reload of the table at address after its orphan
// scan listed storage (orphans.Env.Reload, rule 2: the referenced set comes
// from metadata at least as new as the listing): obs, the table the
// observation loaded, when the catalog, asked after the listing, still
// names obs's metadata file (a metadata file is written once: the same
// location is the same metadata); else a fresh load. So a plan parses a
// table's metadata once for its observation and its scan (issue 44:
// iceberg-go's parse was 47% of a fleet plan's CPU). Only a SQL catalog can
// say its metadata location without the metadata (currentMetadataLocation);
// any other catalog's table is loaded again.
func (s *Session) planReload(ctx context.Context, address string, obs *table.Table) (*table.Table, error) {
	if loc, ok := s.currentMetadataLocation(ctx, address); ok && loc == obs.MetadataLocation() {
		s.reloadsShared.Add(1)
		return obs, nil
	}
	return s.loadTable(ctx, address)
}

// foreignOwner is expiry's question at deletion (orphans.ForeignOwner over
// a fresh listing of the tables the run can see).
func (s *Session) foreignOwner(ctx context.Context, address, location string) (func(string) string, error) {
	ts, err := s.tableLocations(ctx)
	if err != nil {
		return nil, err
	}
	return orphans.ForeignOwner(ctx, ts, address, location)
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

// tableLocations lists every table the run can see: every table of every
// configured catalog, and the tables a SQL catalog's database holds under
// other catalog names (sqlOtherNames), keyed by address, each with its
// location and write paths (orphans.LocationOf), and, read when first asked
// (orphans.Tables.ReadReferences, tableReferences), the files each
// references outside them: the orphan sweep's and expiry's OtherTables, in
// plan and apply. A catalog that cannot be listed makes the answer unknown
// (an error); a table that cannot be loaded is in the answer, Unreadable,
// and refuses the sweeps it could reach.
//
// It runs right before each table's deletions, so it must see tables
// created during the apply, but loading every table of every catalog for
// each table checked costs a metadata read per table each time, and
// reading their references a manifest walk. So the identifiers are listed
// afresh at every call (catalog listings only: a table created since the
// last call is loaded and caught), while a table already loaded (or read)
// in this session is not loaded (or read) again: it is taken as it was
// then, and the answer is rebuilt only when the set of tables changed.
// What this does not see is an existing table changed during the run
// (moved with ALTER TABLE ... SET LOCATION, dropped and recreated
// elsewhere, or given another table's file with add_files after it was
// read); files such a table writes are younger than the age guard, a saved
// plan's apply is a new run, and the next plan's check sees it.
func (s *Session) tableLocations(ctx context.Context) (*orphans.Tables, error) {
	return s.tablesListed(ctx, 0)
}

// plannedTables is tableLocations for a plan's observation (and inspect):
// the last listing is reused while it is younger than listingReuse. A
// plan's scan of every table of a fleet would otherwise list every catalog
// once per table, which grows with the square of the fleet (issue 44:
// 10,000 tables listed 10,000 times). What the plan says of other tables
// is at most listingReuse old; apply's re-check right before it deletes
// (the sweep's re-check, orphans.Kind, and expiry's foreignOwner) lists afresh.
// The references a plan reads are decoded with the fast decoder
// (reach.DecodeFast) and kept apart from apply's, which iceberg-go's reader
// reads (a file is deleted only on its word): a run that plans and applies
// reads the references of a table it deletes in twice, once each way.
func (s *Session) plannedTables(ctx context.Context) (*orphans.Tables, error) {
	return s.tablesListed(ctx, listingReuse)
}

// listingReuse is how long a plan reuses the session's listing of the
// tables the run can see (plannedTables).
const listingReuse = time.Minute

// tablesListed is tableLocations, reusing a listing begun less than reuse
// ago (0: never).
func (s *Session) tablesListed(ctx context.Context, reuse time.Duration) (*orphans.Tables, error) {
	lc := s.tableCache()
	dec := reach.DecodeVerified
	if reuse > 0 {
		dec = reach.DecodeFast // a plan's
	}
	// One check at a time: the first loads every table once, the others
	// then only list.
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if reuse > 0 && lc.tables[dec] != nil && time.Since(lc.listedAt) < reuse {
		return lc.tables[dec], nil
	}
	// The listing's age counts from before it began: a table created
	// while it ran may be missing from it.
	began := time.Now()
	lc.listings++
	var addrs []string
	for _, c := range s.cfg.Catalogs {
		listed, err := s.ListTables(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		for _, a := range listed {
			addrs = append(addrs, a)
			if _, ok := lc.loaders[a]; !ok {
				lc.loaders[a] = func(ctx context.Context) (*table.Table, error) { return s.loadTable(ctx, a) }
			}
		}
		others, err := s.sqlOtherNames(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, o := range others {
			addrs = append(addrs, o.addr)
			if _, ok := lc.loaders[o.addr]; !ok {
				lc.loaders[o.addr] = o.load
			}
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	err := readTables(ctx, lc, addrs, lc.byAddr, orphans.LocationOf, func() { lc.loads++ })
	if err != nil {
		return nil, err
	}
	lc.listedAt = began
	if lc.tables[dec] != nil && slices.Equal(lc.addrs[dec], addrs) {
		return lc.tables[dec], nil
	}
	out := map[string]orphans.TableLocation{}
	for _, a := range addrs {
		if tl, ok := lc.byAddr[a]; ok {
			out[a] = tl
		}
	}
	lc.addrs[dec] = addrs
	lc.tables[dec] = orphans.LazyTables(out, func(ctx context.Context, skip string) (map[string]orphans.TableLocation, error) {
		return s.tableReferences(ctx, slices.DeleteFunc(slices.Clone(addrs), func(a string) bool { return a == skip }), dec)
	})
	return lc.tables[dec], nil
}

// tableReferences reads the references of the tables at addrs
// (orphans.ReadTable, decoding with dec), each once per session and
// decoder.
func (s *Session) tableReferences(ctx context.Context, addrs []string, dec reach.Decoder) (map[string]orphans.TableLocation, error) {
	// The run's read, not the asking action's (WithRunMeter).
	ctx = meter.Apart(ctx)
	lc := s.tableCache()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.withRefs[dec] == nil {
		lc.withRefs[dec] = map[string]orphans.TableLocation{}
	}
	err := readTables(ctx, lc, addrs, lc.withRefs[dec], func(t *table.Table) orphans.TableLocation { return orphans.ReadTable(ctx, t, dec) }, func() { lc.reads++ })
	if err != nil {
		return nil, err
	}
	out := map[string]orphans.TableLocation{}
	for _, a := range addrs {
		if tl, ok := lc.withRefs[dec][a]; ok {
			out[a] = tl
		}
	}
	return out, nil
}

// readTables loads each table of addrs that into does not hold yet,
// tableReaders at a time, and puts read's answer for it there (a table
// that cannot be loaded: Unreadable; a dropped one: nothing). counted runs
// for each table loaded. The caller holds lc.mu.
func readTables(ctx context.Context, lc *locationCache, addrs []string, into map[string]orphans.TableLocation, read func(*table.Table) orphans.TableLocation, counted func()) error {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, tableReaders)
	)
	// What to read is decided before the readers start: they write into.
	var todo []string
	for _, a := range addrs {
		if _, ok := into[a]; !ok {
			todo = append(todo, a)
		}
	}
	for _, a := range todo {
		load := lc.loaders[a]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var tl orphans.TableLocation
			t, err := load(ctx)
			switch {
			case errors.Is(err, catalog.ErrNoSuchTable):
				return // dropped since it was listed
			case err != nil:
				tl.Unreadable = err.Error()
			default:
				tl = read(t)
			}
			mu.Lock()
			defer mu.Unlock()
			into[a] = tl
			counted()
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// tableReaders is how many tables tableLocations loads, and
// tableReferences reads, at once.
const tableReaders = 4

// tableCache is the session's locationCache, made on first use.
func (s *Session) tableCache() *locationCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locations == nil {
		s.locations = &locationCache{byAddr: map[string]orphans.TableLocation{}, withRefs: map[reach.Decoder]map[string]orphans.TableLocation{},
			tables: map[reach.Decoder]*orphans.Tables{}, addrs: map[reach.Decoder][]string{},
			loaders: map[string]func(context.Context) (*table.Table, error){}}
	}
	return s.locations
}

// locationCache is the tables one session has loaded (tableLocations) and
// read (tableReferences).
type locationCache struct {
	mu      sync.Mutex
	loaders map[string]func(context.Context) (*table.Table, error)
	byAddr  map[string]orphans.TableLocation // loaded: locations
	// withRefs are the tables read with their references, by the decoder
	// that read them: a plan's (fast) and apply's (iceberg-go's) apart.
	withRefs map[reach.Decoder]map[string]orphans.TableLocation
	loads    int // tables loaded, for tests
	reads    int // tables read with references, for tests
	listings int // listings of the catalogs, for tests
	// addrs and tables are the last answer, by decoder: it is rebuilt only
	// when the tables listed change.
	addrs  map[reach.Decoder][]string
	tables map[reach.Decoder]*orphans.Tables
	// listedAt is when the listing behind tables began (plannedTables).
	listedAt time.Time
}

// namesRead are the catalog names that the configured SQL catalogs on c's
// database read (their labels), c's own included.
func (s *Session) namesRead(c *config.Catalog) map[string]bool {
	read := map[string]bool{c.Name: true}
	for _, o := range s.cfg.Catalogs {
		if o.Type == "sql" && o.URI == c.URI {
			read[o.Name] = true
		}
	}
	return read
}

// OtherCatalogNames are the catalog names a SQL catalog's database holds
// tables under that no configured catalog block reads, sorted: their tables
// count as other tables (sqlOtherNames), and the plan (IW116) and doctor
// say so. Nothing for other catalog types.
func (s *Session) OtherCatalogNames(ctx context.Context, catalogName string) ([]string, error) {
	c, err := s.catalogConfig(catalogName)
	if err != nil || c.Type != "sql" {
		return nil, err
	}
	names, err := s.SQLCatalogNames(ctx, catalogName)
	if err != nil {
		return nil, err
	}
	read := s.namesRead(c)
	return slices.DeleteFunc(names, func(n string) bool { return read[n] }), nil
}

// otherName is a table that a SQL catalog's database holds under another
// catalog_name than the catalog's label.
type otherName struct {
	addr string
	load func(ctx context.Context) (*table.Table, error)
}

// sqlOtherNames are the tables c's database holds under catalog names that
// are not c's label (iceberg-go's SQL catalog reads only its own): PyIceberg's
// "default" beside a catalog labelled "lake", say, whose tables sit at the
// same locations when they have the same names. Each is named
// "<catalog_name>.<namespace>.<table> (catalog_name ..., in catalog c's
// database)" and read from its metadata location with c's storage settings.
// A name that another configured SQL catalog on the same database reads
// is that catalog's. Nothing for other catalog types.
func (s *Session) sqlOtherNames(ctx context.Context, c *config.Catalog) ([]otherName, error) {
	// The catalog names first (one index scan): the rows are read only
	// when another name is there.
	if names, err := s.OtherCatalogNames(ctx, c.Name); err != nil || len(names) == 0 {
		return nil, err
	}
	rows, err := s.sqlTableRows(ctx, c.Name)
	if err != nil {
		return nil, err
	}
	read := s.namesRead(c)
	var out []otherName
	for _, r := range rows {
		if read[r.Catalog] || r.Metadata == "" || r.View {
			continue
		}
		ident := append(strings.Split(r.Namespace, "."), r.Name)
		addr := fmt.Sprintf("%s (catalog_name %q, in catalog %q's database)", joinAddress(r.Catalog, ident), r.Catalog, c.Name)
		meta := r.Metadata
		props := maps.Clone(c.Properties)
		out = append(out, otherName{addr: addr, load: func(ctx context.Context) (*table.Table, error) {
			t, err := table.NewFromLocation(ctx, ident, meta, func(ctx context.Context) (iceio.IO, error) {
				return iceio.LoadFS(ctx, props, meta)
			}, nil)
			if err != nil {
				return nil, fmt.Errorf("load %s from %s: %w", addr, meta, err)
			}
			return t, nil
		}})
	}
	return out, nil
}
