package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
)

// smoke creates a namespace and a table in cat, appends three snapshots,
// reads the rows back and lists the table's files through its IO.
func smoke(ctx context.Context, t *testing.T, cat catalog.Catalog, ns string, opts ...catalog.CreateTableOpt) {
	t.Helper()
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	ident := table.Identifier{ns, "events"}
	tbl, err := cat.CreateTable(ctx, ident, eventsSchema, opts...)
	if err != nil {
		t.Fatalf("create table %v: %v", ident, err)
	}
	for i := int64(0); i < 3; i++ {
		tbl = appendRows(ctx, t, tbl, i*100, 100)
	}
	// Reload through the catalog: what another process would see.
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	if got := countRows(ctx, t, tbl); got != 300 {
		t.Errorf("rows = %d, want 300", got)
	}
	if got := len(tbl.Metadata().Snapshots()); got != 3 {
		t.Errorf("snapshots = %d, want 3", got)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatalf("table IO: %v", err)
	}
	files := listFiles(t, fsys, tbl.Location())
	if got := countSuffix(files, ".parquet"); got != 3 {
		t.Errorf("listed %d parquet files under %s, want 3: %v", got, tbl.Location(), files)
	}
	if got := countSuffix(files, ".metadata.json"); got < 1 {
		t.Errorf("listed no metadata.json under %s: %v", tbl.Location(), files)
	}
	t.Logf("%v at %s: %d files listed", ident, tbl.Location(), len(files))
}

func TestSmokePostgresS3(t *testing.T) {
	dsn := testenv.PostgresDatabase(t)
	s3 := testenv.S3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	props := s3.Properties()
	props["type"] = "sql"
	props["uri"] = dsn
	props["sql.driver"] = "pgx"
	props["sql.dialect"] = "postgres"
	props["warehouse"] = s3.URL("warehouse")
	cat := loadCatalog(ctx, t, "lake", props)
	ns := testenv.UniqueName(t, "ns")
	smoke(ctx, t, cat, ns, catalog.WithLocation(s3.URL("warehouse", ns, "events")))
}

func TestSmokeREST(t *testing.T) {
	rest := testenv.REST(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	props := rest.Properties()
	props["type"] = "rest"
	cat := loadCatalog(ctx, t, "lake", props)
	ns := testenv.UniqueName(t, "ns")
	smoke(ctx, t, cat, ns)
}
