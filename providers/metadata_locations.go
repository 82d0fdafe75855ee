package providers

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/catalogs"
	"github.com/icewright/icewright/providers/internal/bound"
)

// metadataLoads is how many tables MetadataLocations loads at once from a
// catalog that has no query for them all.
const metadataLoads = 8

// MetadataLocations is every table of the catalog, by address, with the
// location of its current metadata file: what reconcile compares with the
// last observation to learn which tables changed (issue 44). A SQL
// catalog answers with one query (its database's iceberg_tables, the rows
// the catalog reads); any other catalog is listed and each table's
// location asked for (metadataLocation). A REST catalog's is its
// load-table answer's "metadata-location", read from the answer as it
// streams in, the metadata JSON scanned but not parsed
// (catalogs.MetadataLocation: the request is iceberg-go's own, with the
// catalog's session and authentication); other catalogs load the table
// (the metadata file only: no manifest list, no manifest). No
// If-None-Match: iceberg-go v0.7.0's REST client exposes no response's
// ETag and has no path for a 304 in LoadTable, and the REST catalog of
// scripts/services.sh (SeaweedFS) sends no ETag with a table and answers
// If-None-Match with the table (200), so a conditional load would save
// nothing there.
// A table whose location cannot be learnt is in the map with "" (reconcile
// observes it; the plan says its error); an error is the catalog's own
// (unreachable, not listable).
func (s *Session) MetadataLocations(ctx context.Context, catalogName string) (map[string]string, error) {
	c, err := s.catalogConfig(catalogName)
	if err != nil {
		return nil, err
	}
	if c.Type == "sql" {
		rows, err := s.sqlTableRows(ctx, catalogName)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, r := range rows {
			if r.Catalog != catalogName || r.View {
				continue
			}
			out[joinAddress(catalogName, append(sqlNamespace(r.Namespace), r.Name))] = r.Metadata
		}
		return out, nil
	}
	return s.loadedLocations(ctx, catalogName)
}

// loadedLocations is MetadataLocations by listing the catalog and asking
// each table's location (metadataLocation), metadataLoads at once.
func (s *Session) loadedLocations(ctx context.Context, catalogName string) (map[string]string, error) {
	addrs, err := s.ListTables(ctx, catalogName)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(addrs))
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, metadataLoads)
	)
	for _, a := range addrs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			loc, _ := s.metadataLocation(ctx, a)
			mu.Lock()
			out[a] = loc
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

// metadataLocation is the location of the current metadata file of the
// table at address, as its catalog says it (catalogs.MetadataLocation),
// bounded and repeated like any catalog read. When the catalog's answer
// does not say it for certain (catalogs.ErrLocationUnsure), the table is
// loaded and its location is the loaded table's.
func (s *Session) metadataLocation(ctx context.Context, address string) (string, error) {
	catName, ident, err := splitAddress(address)
	if err != nil {
		return "", err
	}
	cat, err := s.Catalog(ctx, catName)
	if err != nil {
		return "", err
	}
	var loc string
	// With the storage limits, as loadTable: a catalog other than REST
	// reads the metadata file from the object store.
	err = bound.Read(bound.With(s.WithStorageLimits(ctx), s.catalogTimeout(catName)), func(ctx context.Context) error {
		var err error
		loc, err = catalogs.MetadataLocation(ctx, cat, ident)
		return err
	})
	if errors.Is(err, catalogs.ErrLocationUnsure) {
		tbl, err := s.loadTable(ctx, address)
		if err != nil {
			return "", err
		}
		return tbl.MetadataLocation(), nil
	}
	if err != nil {
		return "", loadError(address, catName, err)
	}
	return loc, nil
}

// currentMetadataLocation is the metadata location that the SQL catalog of
// the table at address holds for it now, read with one query on its row
// (catalogs.SQLTableRowsOf), bounded like a catalog read. false when that
// cannot say: not a SQL catalog, a namespace that iceberg-go stores under
// another key (a level with a dot, or the encoded form's marker), no
// single table row, an error; the caller then loads the table, which says
// what is wrong.
func (s *Session) currentMetadataLocation(ctx context.Context, address string) (string, bool) {
	catName, ident, err := splitAddress(address)
	if err != nil || len(ident) < 2 {
		return "", false
	}
	if c, err := s.catalogConfig(catName); err != nil || c.Type != "sql" {
		return "", false
	}
	db, err := s.sqlDB(ctx, catName)
	if err != nil {
		return "", false
	}
	var rows []catalogs.SQLTableRow
	err = bound.Read(bound.With(ctx, s.catalogTimeout(catName)), func(ctx context.Context) error {
		var err error
		rows, err = catalogs.SQLTableRowsOf(ctx, db, catName, ident[:len(ident)-1], ident[len(ident)-1])
		return err
	})
	rows = slices.DeleteFunc(rows, func(r catalogs.SQLTableRow) bool { return r.View })
	if err != nil || len(rows) != 1 || rows[0].Metadata == "" {
		return "", false
	}
	return rows[0].Metadata, true
}

// sqlNamespace is the namespace of an iceberg_tables row as iceberg-go's
// SQL catalog reads it (catalog/sql's namespaceFromString): dotted text,
// or the JSON list after catalogs.SQLEncodedNamespace.
func sqlNamespace(ns string) table.Identifier {
	if enc, ok := strings.CutPrefix(ns, catalogs.SQLEncodedNamespace); ok {
		var ident table.Identifier
		if json.Unmarshal([]byte(enc), &ident) == nil && len(ident) > 0 {
			return ident
		}
	}
	return strings.Split(ns, ".")
}
