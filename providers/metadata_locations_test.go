package providers

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/catalogs"
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

// TestMetadataLocationsREST: on the REST catalog of scripts/services.sh, a
// table's location read from its load answer (catalogs.MetadataLocation,
// the metadata not parsed) is the location iceberg-go's LoadTable gives,
// for several tables, escaped names among them (a space, '#', non-ASCII,
// a nested namespace; a namespace level with a dot where the server takes
// one); MetadataLocations (the catalog is shared: only this test's
// namespace is compared) says the same, and a commit changes its table's
// location and no other.
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
	// The escaped names are tried; a server that refuses one (SeaweedFS
	// takes only a-z, 0-9, '_' and '-') is logged, and the fake catalog of
	// TestMetadataLocationRESTRead covers them.
	namespaces := []table.Identifier{{ns}, {ns, "sub"}, {ns + ".d"}}
	all := []table.Identifier{{ns, "a"}, {ns, "b"}, {ns, "c-1"}, {ns, "x y"}, {ns, "t#1"}, {ns, "é"}, {ns, "sub", "c"}, {ns + ".d", "e"}}
	for i, n := range namespaces {
		if err := cat.CreateNamespace(ctx, n, nil); err != nil {
			if i == 0 {
				t.Fatal(err)
			}
			t.Logf("the server refuses namespace %q: %v", n, err)
			continue
		}
		t.Cleanup(func() { _ = cat.DropNamespace(context.Background(), n) })
	}
	tbls := map[string]*table.Table{}
	var idents []table.Identifier
	for i, id := range all {
		tbl, err := cat.CreateTable(ctx, id, lakehouse.EventsSchema())
		if err != nil {
			if i < 2 {
				t.Fatalf("create %q: %v", id, err)
			}
			t.Logf("the server refuses table %q: %v", id, err)
			continue
		}
		idents = append(idents, id)
		tbls[strings.Join(id, "\x00")] = tbl
		t.Cleanup(func() { _ = cat.DropTable(context.Background(), id) })
	}

	p := env.S3.Properties()
	p["credential"] = env.Credential()
	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{{Name: "rest", Type: "rest", URI: env.URI, Warehouse: env.Warehouse, Properties: p}}}
	sess := Open(cfg, Options{})
	defer sess.Close()
	ours, err := sess.Catalog(ctx, "rest")
	if err != nil {
		t.Fatal(err)
	}
	// Each table's location, read (catalogs.MetadataLocation) and loaded
	// by iceberg-go (LoadTable, through the registry's catalog: no read).
	read := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, id := range idents {
			loc, err := catalogs.MetadataLocation(ctx, ours, id)
			if err != nil {
				t.Fatalf("%q: %v", id, err)
			}
			tbl, err := cat.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if loc == "" || loc != tbl.MetadataLocation() {
				t.Fatalf("%q: read %q, iceberg-go's load %q", id, loc, tbl.MetadataLocation())
			}
			out[strings.Join(id, "\x00")] = loc
		}
		// The session's listing says the same for every table an address
		// can name (no level with a dot: config.SplitLevels).
		all, err := sess.MetadataLocations(ctx, "rest")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range idents {
			if strings.Contains(strings.Join(id, ""), ".") {
				continue
			}
			if a := joinAddress("rest", id); all[a] != out[strings.Join(id, "\x00")] {
				t.Fatalf("%s: MetadataLocations %q, read %q", a, all[a], out[strings.Join(id, "\x00")])
			}
		}
		return out
	}
	before := read()
	for k, tbl := range tbls {
		if before[k] != tbl.MetadataLocation() {
			t.Fatalf("%q: %q, created with %q", k, before[k], tbl.MetadataLocation())
		}
	}
	a := strings.Join(table.Identifier{ns, "a"}, "\x00")
	txn := tbls[a].NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"icewright.test": "1"}); err != nil {
		t.Fatal(err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := read()
	for k, loc := range before {
		if changed := after[k] != loc; changed != (k == a) {
			t.Errorf("after a commit to a: %q %q -> %q", k, loc, after[k])
		}
	}
	if after[a] != next.MetadataLocation() {
		t.Errorf("a: %q after its commit, the commit's %q", after[a], next.MetadataLocation())
	}
}
