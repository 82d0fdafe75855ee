package catalogs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
)

// TestSQLTableRowsOf: the one-row query (a plan's reload asks it for a
// table's metadata location, providers' currentMetadataLocation) answers
// with the row iceberg-go's SQL catalog wrote for the table and nothing
// for another catalog name, namespace or table, on sqlite and on
// PostgreSQL (whose placeholders are $n, as the query's).
func TestSQLTableRowsOf(t *testing.T) {
	dir := t.TempDir()
	sqlite := filepath.Join(dir, "catalog.db")
	if err := os.WriteFile(sqlite, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, uri string }{
		{"sqlite", "sqlite:" + sqlite},
		{"postgres", testenv.PostgresDatabase(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			wh := filepath.Join(dir, tc.name)
			cat, db, err := Open(ctx, dir, &config.Catalog{Name: "lake", Type: "sql", URI: tc.uri, Warehouse: "file://" + wh})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
				t.Fatal(err)
			}
			tbl, err := cat.CreateTable(ctx, table.Identifier{"ns", "t"}, lakehouse.EventsSchema())
			if err != nil {
				t.Fatal(err)
			}
			rows, err := SQLTableRowsOf(ctx, db, "lake", []string{"ns"}, "t")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Metadata != tbl.MetadataLocation() || rows[0].View {
				t.Fatalf("rows = %+v, want the table's at %s", rows, tbl.MetadataLocation())
			}
			for _, k := range [][3]string{{"other", "ns", "t"}, {"lake", "ns2", "t"}, {"lake", "ns", "u"}} {
				if rows, err := SQLTableRowsOf(ctx, db, k[0], []string{k[1]}, k[2]); err != nil || len(rows) != 0 {
					t.Errorf("%v: rows %+v, err %v; want none", k, rows, err)
				}
			}
		})
	}
}
