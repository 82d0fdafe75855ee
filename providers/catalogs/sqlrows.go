package catalogs

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/icewright/icewright/internal/lakehouse"
)

// SQLTableRow is one row of a SQL catalog database's iceberg_tables.
type SQLTableRow struct {
	Catalog, Namespace, Name, Metadata string
	View                               bool // iceberg_type says VIEW
}

// SQLTableRows reads every row of a SQL catalog database's iceberg_tables,
// whatever its catalog_name. The table's columns are read by name:
// databases that JDBC catalogs made before views have no iceberg_type.
func SQLTableRows(ctx context.Context, db *sql.DB) ([]SQLTableRow, error) {
	return sqlTableRows(ctx, db, "SELECT * FROM iceberg_tables")
}

// SQLTableRowsOf reads the rows of iceberg_tables under one primary key
// (catalog name, namespace, table name): the one table's row, and its
// view's if a view has the same name. The namespace is stored under the
// key iceberg-go's SQL catalog gives it (lakehouse.NamespaceKey); one
// that it stores encoded (a level with a dot, or holding the encoded
// form's marker) is an error, not a guess.
func SQLTableRowsOf(ctx context.Context, db *sql.DB, catalogName string, namespace []string, name string) ([]SQLTableRow, error) {
	key, err := lakehouse.NamespaceKey(namespace)
	if err != nil {
		return nil, err
	}
	if strings.Contains(key, SQLEncodedNamespace) {
		return nil, fmt.Errorf("namespace %q is stored in iceberg-go's encoded form", key)
	}
	return sqlTableRows(ctx, db, "SELECT * FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3",
		catalogName, key, name)
}

// SQLEncodedNamespace marks a namespace that iceberg-go's SQL catalog
// stores as JSON because a level holds a dot (catalog/sql's
// encodedNamespacePrefix, unexported).
const SQLEncodedNamespace = "__iceberg_namespace_v1__:"

// sqlTableRows runs query, a SELECT * of iceberg_tables, with args.
func sqlTableRows(ctx context.Context, db *sql.DB, query string, args ...any) ([]SQLTableRow, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []SQLTableRow
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var r SQLTableRow
		for i, c := range cols {
			v := vals[i].String
			switch strings.ToLower(c) {
			case "catalog_name":
				r.Catalog = v
			case "table_namespace":
				r.Namespace = v
			case "table_name":
				r.Name = v
			case "metadata_location":
				r.Metadata = v
			case "iceberg_type":
				r.View = strings.EqualFold(v, "VIEW")
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SQLCatalogNames is the catalog_name values a SQL catalog database holds
// tables under, sorted.
func SQLCatalogNames(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT catalog_name FROM iceberg_tables ORDER BY catalog_name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}
