package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icewright/icewright/internal/testenv"
)

// backend is one catalog + storage combination the end-to-end tests run on.
type backend struct {
	name string
	cat  catalog.Catalog
	// ioProps are the properties the table IO needs (s3.* keys).
	ioProps map[string]string
	// hcl is the `catalog "<name>"` block body for an icewright configuration.
	hcl func(catalogName string) string
	// location returns where a table of ours lives, or "" to let the
	// catalog choose (REST).
	location func(ns, name string) string
	// register adds an existing table (its metadata file) to the catalog.
	register func(ctx context.Context, t testing.TB, ident table.Identifier, metadataLoc string)
	// fixtureLocation is where a copied fixture table goes.
	fixtureLocation func(ns, name string) string
	// noSideFiles: the storage refuses files outside the Iceberg layout
	// (an S3 Tables bucket), so Hadoop's .crc files are not copied.
	noSideFiles bool
}

const catalogName = "lake"

// sqliteFile: the embedded default, a sqlite catalog and a local warehouse.
func sqliteFile(ctx context.Context, t testing.TB) *backend {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	warehouse := filepath.Join(dir, "warehouse")
	db, err := sql.Open(sqliteshim.ShimName, "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + warehouse})
	if err != nil {
		t.Fatalf("sqlite catalog: %v", err)
	}
	loc := func(ns, name string) string { return "file://" + filepath.Join(warehouse, ns, name) }
	return &backend{
		name: "sqlite+file", cat: cat, ioProps: map[string]string{},
		hcl: func(string) string {
			return fmt.Sprintf("type = \"sql\"\n  uri = \"sqlite:%s\"\n  warehouse = \"%s\"\n", dbPath, warehouse)
		},
		location:        loc,
		fixtureLocation: loc,
		register: func(ctx context.Context, t testing.TB, ident table.Identifier, md string) {
			registerSQL(ctx, t, db, sqlcat.SQLite, ident, md)
		},
	}
}

// postgresS3: a SQL catalog on PostgreSQL, the warehouse on S3 (versitygw).
func postgresS3(ctx context.Context, t testing.TB) *backend {
	dsn := testenv.PostgresDatabase(t)
	s3 := testenv.S3(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	props := iceberg.Properties(s3.Properties())
	props["warehouse"] = s3.URL("warehouse")
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.Postgres, props)
	if err != nil {
		t.Fatalf("postgres catalog: %v", err)
	}
	loc := func(ns, name string) string { return s3.URL("warehouse", ns, name) }
	return &backend{
		name: "postgres+s3", cat: cat, ioProps: s3.Properties(),
		hcl: func(string) string {
			return fmt.Sprintf("type = \"sql\"\n  uri = %q\n  warehouse = %q\n  properties = {\n%s  }\n",
				dsn, s3.URL("warehouse"), hclMap(s3.Properties()))
		},
		location:        loc,
		fixtureLocation: loc,
		register: func(ctx context.Context, t testing.TB, ident table.Identifier, md string) {
			registerSQL(ctx, t, db, sqlcat.Postgres, ident, md)
		},
	}
}

// restS3: the Iceberg REST catalog of SeaweedFS and its S3.
func restS3(ctx context.Context, t testing.TB) *backend {
	env := testenv.REST(t)
	return restBackend(ctx, t, env)
}

func restBackend(ctx context.Context, t testing.TB, env testenv.RESTEnv) *backend {
	props := iceberg.Properties(env.Properties())
	props["type"] = "rest"
	cat, err := catalog.Load(ctx, catalogName, props)
	if err != nil {
		t.Fatalf("rest catalog %s: %v", env.URI, err)
	}
	rc := cat.(*rest.Catalog)
	return &backend{
		name: "rest+s3", cat: cat, ioProps: env.S3.Properties(),
		hcl: func(string) string {
			p := env.S3.Properties()
			p["credential"] = env.Credential()
			return fmt.Sprintf("type = \"rest\"\n  uri = %q\n  warehouse = %q\n  properties = {\n%s  }\n",
				env.URI, env.Warehouse, hclMap(p))
		},
		location: func(string, string) string { return "" },
		// An S3 Tables bucket holds tables at <bucket>/<namespace>/<table>.
		fixtureLocation: func(ns, name string) string {
			return "s3://" + env.S3.Bucket + "/" + ns + "/" + name
		},
		noSideFiles: true,
		register: func(ctx context.Context, t testing.TB, ident table.Identifier, md string) {
			if _, err := rc.RegisterTable(ctx, ident, md); err != nil {
				t.Fatalf("REST RegisterTable %v %s: %v", ident, md, err)
			}
		},
	}
}

// registerSQL registers an existing table in iceberg-go's SQL catalog
// tables (v0.7.0 has no RegisterTable): the row CreateTable would write.
func registerSQL(ctx context.Context, t testing.TB, db *sql.DB, d sqlcat.SupportedDialect, ident table.Identifier, md string) {
	t.Helper()
	ns := strings.Join(ident[:len(ident)-1], ".")
	q := `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location, previous_metadata_location) VALUES (?, ?, ?, 'TABLE', ?, NULL)`
	if d == sqlcat.Postgres {
		q = `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location, previous_metadata_location) VALUES ($1, $2, $3, 'TABLE', $4, NULL)`
	}
	if _, err := db.ExecContext(ctx, q, catalogName, ns, ident[len(ident)-1], md); err != nil {
		t.Fatalf("register %v in SQL catalog: %v", ident, err)
	}
}

func hclMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(&b, "    %q = %q\n", k, m[k])
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// createNamespace creates ns (ignoring "already exists").
func createNamespace(ctx context.Context, t testing.TB, cat catalog.Catalog, ns string) {
	t.Helper()
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil && !strings.Contains(strings.ToLower(err.Error()), "exist") {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

type backendFunc func(context.Context, testing.TB) *backend

var allBackends = []struct {
	name string
	open backendFunc
}{
	{"sqlite_file", sqliteFile},
	{"postgres_s3", postgresS3},
	{"rest_s3", restS3},
}
