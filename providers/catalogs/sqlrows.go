package catalogs

import (
	"context"
	"database/sql"
	"strings"
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
	rows, err := db.QueryContext(ctx, "SELECT * FROM iceberg_tables")
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
