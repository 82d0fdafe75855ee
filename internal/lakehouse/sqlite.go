// Package lakehouse holds the small pieces shared by the catalogs
// (providers/catalogs: the embedded sqlite SQL catalog), the demo builder
// (providers/demo), the test kit (providers/testkit), the end-to-end tests
// and the benchmarks: opening an embedded sqlite SQL catalog, registering a
// table by metadata location, the fixtures of internal/testdata/tables
// copied with their paths rewritten, and the "time machine" that backdates a
// table's history. It imports no package of icewright, so that any of them,
// tests included, can use it without a cycle (providers' own tests import
// testkit, which imports it).
package lakehouse

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/apache/iceberg-go"
)

// SQLiteDSN is the DSN for the pure-Go sqlite driver behind sqliteshim
// (modernc.org/sqlite). WAL lets planners read while an apply commits, and
// the busy timeout turns "database is locked" between our own concurrent
// commits (parallel apply) into a short wait instead of an error. The pragmas
// are in the DSN so that every pooled connection gets them.
// A query from the catalog URI (e.g. "mode=ro") is kept in front of them.
func SQLiteDSN(path, query string) string {
	if query != "" {
		query += "&"
	}
	return path + "?" + query + "_pragma=" + url.QueryEscape("busy_timeout(10000)") +
		"&_pragma=" + url.QueryEscape("journal_mode(WAL)")
}

// OpenSQLiteDB opens (creating if needed) the sqlite database file at path.
func OpenSQLiteDB(path string) (*sql.DB, error) {
	return OpenSQLiteDBQuery(path, "")
}

// OpenSQLiteDBQuery is OpenSQLiteDB with extra DSN query parameters.
func OpenSQLiteDBQuery(path, query string) (*sql.DB, error) {
	db, err := sql.Open(sqliteshim.ShimName, SQLiteDSN(path, query))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

// NewSQLCatalog wraps db as an iceberg-go SQL catalog named name. The
// catalog does not own db (iceberg-go leaves caller-supplied handles open), so
// the caller closes db after the catalog. props are passed through
// (warehouse, s3.*, ...); the catalog tables are created when missing.
func NewSQLCatalog(name string, db *sql.DB, dialect sqlcat.SupportedDialect, props iceberg.Properties) (*sqlcat.Catalog, error) {
	cat, err := sqlcat.NewCatalog(name, db, dialect, props)
	if err != nil {
		return nil, fmt.Errorf("sql catalog %q: %w", name, err)
	}
	return cat, nil
}

// NamespaceKey is how iceberg-go's SQL catalog stores a namespace in
// iceberg_tables.table_namespace: dot-joined, unless a component itself
// contains a dot (then a JSON encoding with a marker prefix, which we do not
// need for registering and refuse rather than guess).
func NamespaceKey(ns []string) (string, error) {
	for _, p := range ns {
		if strings.Contains(p, ".") || p == "" {
			return "", fmt.Errorf("namespace component %q is not supported for registration", p)
		}
	}
	return strings.Join(ns, "."), nil
}

// RegisterSQL registers an existing table by its metadata location in a SQL
// catalog's database. iceberg-go v0.7.0's SQL catalog has no RegisterTable, so
// we insert the row the catalog itself would write (same columns as its
// CreateTable), creating the namespace marker row too.
func RegisterSQL(ctx context.Context, db *sql.DB, catalogName string, ident []string, metadataLocation string) error {
	if len(ident) < 2 {
		return fmt.Errorf("register %v: identifier needs a namespace and a name", ident)
	}
	ns, err := NamespaceKey(ident[:len(ident)-1])
	if err != nil {
		return fmt.Errorf("register %v: %w", ident, err)
	}
	name := ident[len(ident)-1]
	// Make sure the catalog's tables exist (a fresh file has none).
	if _, err := NewSQLCatalog(catalogName, db, sqlcat.SQLite, iceberg.Properties{}); err != nil {
		return fmt.Errorf("register %v: %w", ident, err)
	}
	if _, err := db.ExecContext(ctx,
		`INSERT OR IGNORE INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES (?, ?, 'exists', 'true')`,
		catalogName, ns); err != nil {
		return fmt.Errorf("register %v: namespace: %w", ident, err)
	}
	if _, err := db.ExecContext(ctx,
		`INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location, previous_metadata_location) VALUES (?, ?, ?, 'TABLE', ?, NULL)`,
		catalogName, ns, name, metadataLocation); err != nil {
		return fmt.Errorf("register %v: %w", ident, err)
	}
	return nil
}

// SwapMetadata points a SQL catalog's table row at newLoc if it still points
// at oldLoc: the same compare-and-swap the SQL catalog's CommitTable does, so
// a concurrent commit makes this fail instead of being overwritten.
func SwapMetadata(ctx context.Context, db *sql.DB, catalogName string, ident []string, oldLoc, newLoc string) error {
	ns, err := NamespaceKey(ident[:len(ident)-1])
	if err != nil {
		return err
	}
	res, err := db.ExecContext(ctx,
		`UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`,
		newLoc, oldLoc, catalogName, ns, ident[len(ident)-1], oldLoc)
	if err != nil {
		return fmt.Errorf("swap metadata of %v: %w", ident, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("swap metadata of %v: %w", ident, err)
	}
	if n != 1 {
		return fmt.Errorf("swap metadata of %v: table moved or missing (expected metadata %s)", ident, oldLoc)
	}
	return nil
}
