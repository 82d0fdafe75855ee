package providers

import (
	"context"
	"maps"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// TestMetadataLocations: a SQL catalog's one query names every table the
// catalog lists, each with the metadata location a load of it has (nested
// namespaces included), and nothing of another catalog_name in the same
// database; the listing-and-loading path of the other catalogs says the
// same on the same catalog; a commit changes the table's location and no
// other; a catalog that cannot be opened is an error.
func TestMetadataLocations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := testkit.NewLakehouse(t, dir, "lake")
	a := testkit.Append(t, l.CreateTable(t, "sales.a", testkit.TableOptions{}), 1, 10, 1)
	testkit.Append(t, l.CreateTable(t, "sales.eu.b", testkit.TableOptions{}), 2, 10, 1)
	l.CreateTable(t, "ops.empty", testkit.TableOptions{})
	// Another catalog_name in the same database: not lake's.
	cat, err := lakehouse.NewSQLCatalog("other", l.DB, sqlcat.SQLite, iceberg.Properties{"warehouse": l.Warehouse})
	if err != nil {
		t.Fatal(err)
	}
	other := &testkit.Lakehouse{DB: l.DB, DBPath: l.DBPath, Name: "other", Warehouse: l.Warehouse, Catalog: cat}
	other.CreateTable(t, "sales.x", testkit.TableOptions{})

	cfg := &config.Config{Dir: dir, Catalogs: []*config.Catalog{l.ConfigCatalog(),
		{Name: "gone", Type: "sql", URI: "sqlite:" + dir + "/nowhere/catalog.db", Warehouse: l.Warehouse}}}
	sess := Open(cfg, Options{})
	defer sess.Close()

	got, err := sess.MetadataLocations(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	addrs, err := sess.ListTables(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range addrs {
		tbl, err := sess.loadTable(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		want[addr] = tbl.MetadataLocation()
	}
	if len(want) != 3 || !maps.Equal(got, want) {
		t.Fatalf("one query:\n got %v\nwant %v", got, want)
	}
	loaded, err := sess.loadedLocations(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(loaded, want) {
		t.Fatalf("list and load:\n got %v\nwant %v", loaded, want)
	}

	testkit.Append(t, a, 1, 10, 1)
	after, err := sess.MetadataLocations(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	for addr, loc := range want {
		if changed := after[addr] != loc; changed != (addr == "lake.sales.a") {
			t.Errorf("%s: %s -> %s", addr, loc, after[addr])
		}
	}

	if _, err := sess.MetadataLocations(ctx, "gone"); err == nil {
		t.Error("a catalog that cannot be opened: no error")
	}
}

// TestMetadataLocationsREST: a REST catalog's locations are its tables'
// loads (the catalog is shared: only this test's namespace is compared),
// and a commit changes its table's.
func TestMetadataLocationsREST(t *testing.T) {
	env := testenv.REST(t)
	ctx := context.Background()
	props := iceberg.Properties(env.Properties())
	props["type"] = "rest"
	cat, err := catalog.Load(ctx, "rest", props)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.UniqueName(t, "ml")
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
		t.Fatal(err)
	}
	var tbls []*table.Table
	for _, name := range []string{"a", "b"} {
		tbl, err := cat.CreateTable(ctx, table.Identifier{ns, name}, lakehouse.EventsSchema())
		if err != nil {
			t.Fatal(err)
		}
		tbls = append(tbls, tbl)
		t.Cleanup(func() { _ = cat.DropTable(context.Background(), table.Identifier{ns, name}) })
	}
	t.Cleanup(func() { _ = cat.DropNamespace(context.Background(), table.Identifier{ns}) })

	p := env.S3.Properties()
	p["credential"] = env.Credential()
	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{{Name: "rest", Type: "rest", URI: env.URI, Warehouse: env.Warehouse, Properties: p}}}
	sess := Open(cfg, Options{})
	defer sess.Close()
	locs := func() map[string]string {
		t.Helper()
		all, err := sess.MetadataLocations(ctx, "rest")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, name := range []string{"a", "b"} {
			out[name] = all["rest."+ns+"."+name]
		}
		return out
	}
	before := locs()
	for i, name := range []string{"a", "b"} {
		if before[name] == "" || before[name] != tbls[i].MetadataLocation() {
			t.Fatalf("%s: %q, the table has %q", name, before[name], tbls[i].MetadataLocation())
		}
	}
	txn := tbls[0].NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"icewright.test": "1"}); err != nil {
		t.Fatal(err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := locs()
	if after["a"] != next.MetadataLocation() || after["a"] == before["a"] || after["b"] != before["b"] {
		t.Fatalf("after a commit to a: %v, was %v", after, before)
	}
}
