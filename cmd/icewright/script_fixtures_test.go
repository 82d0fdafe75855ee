package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/icewright/icewright/internal/lakehouse"
)

// fixtures DIR CATALOG FIXTURE=NS.TABLE...: a lakehouse of foreign tables
// (internal/testdata/tables, written by Spark, DuckDB, Dremio, Impala...)
// at DIR: DIR/catalog.db, a sqlite SQL catalog named CATALOG, each fixture
// copied under DIR/warehouse and registered as NS.TABLE.
func cmdFixtures(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: fixtures DIR CATALOG FIXTURE=NS.TABLE...")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Join(dir, "warehouse"), 0o755))
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	ts.Check(err)
	defer db.Close()
	for _, a := range args[2:] {
		fixture, name, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("fixtures: %q is not FIXTURE=NS.TABLE", a)
		}
		loc, err := lakehouse.CopyFixture(filepath.Join("..", "..", "internal", "testdata", "tables", fixture),
			filepath.Join(dir, "warehouse", strings.ReplaceAll(name, ".", "_")))
		ts.Check(err)
		ts.Check(lakehouse.RegisterSQL(context.Background(), db, args[1], strings.Split(name, "."), loc))
	}
}
