package expiry_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/testkit"
)

// TestExpireFinishesDeletionsAfterInterruptS3 is
// TestExpireFinishesDeletionsAfterInterrupt on an object store: iceberg-go's
// blob FS sends every request with the context it was opened with, so the
// storage the deletions after the commit go through must not be the one
// opened with the interrupted context (every read and delete would fail
// with "context canceled", the released files stranded and reported in a
// place unknown).
func TestExpireFinishesDeletionsAfterInterruptS3(t *testing.T) {
	env := testenv.S3(t)
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	props := iceberg.Properties(env.Properties())
	props["warehouse"] = env.URL("warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, props)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, lakehouse.EventsSchema(), catalog.WithLocation(env.URL("warehouse", "orders")))
	if err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 4, 10, 1)
	var expire []int64
	for _, id := range testkit.SnapshotIDs(tbl) {
		if id != tbl.CurrentSnapshot().SnapshotID {
			expire = append(expire, id)
		}
	}
	wantFiles, _, err := estimate(ctx, t, tbl, expire, nil)
	if err != nil || wantFiles == 0 {
		t.Fatalf("estimate %d, %v", wantFiles, err)
	}
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	abort, stop := context.WithCancel(ctx)
	defer stop()
	next, res, err := expiry.Expire(runCtx, &interruptingCatalog{CatalogIO: cat, after: interrupt}, tbl,
		expiry.Spec{SnapshotIDs: expire, Abort: abort})
	if err != nil {
		t.Fatalf("expiry interrupted after its commit: %v (%+v)", err, res)
	}
	if runCtx.Err() == nil {
		t.Fatal("the hook did not interrupt")
	}
	if res.FilesDeleted != wantFiles || res.FilesLeft != 0 || res.FilesPlaceUnknown != 0 || len(res.DeleteErrors) != 0 {
		t.Fatalf("deleted %d of %d, left %d, unknown %d, errors %v", res.FilesDeleted, wantFiles, res.FilesLeft, res.FilesPlaceUnknown, res.DeleteErrors)
	}
	testkit.AssertAllReferencedExist(t, next)
}
