package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/expiry"
)

// tagWriterCatalog commits a writer's tag on the real catalog right before
// icewright's expiry commit reaches it: the window between icewright loading the
// table and its commit landing, made certain by the hook, not by timing.
type tagWriterCatalog struct {
	table.CatalogIO
	once   sync.Once
	writer func()
}

func (c *tagWriterCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	c.once.Do(c.writer)
	return c.CatalogIO.CommitTable(ctx, ident, reqs, ups)
}

func (c *tagWriterCatalog) Unwrap() table.CatalogIO { return c.CatalogIO }

// TestExpireKeepsConcurrentTag (issue 13.3): a writer tags a snapshot that
// icewright is expiring, after icewright loaded the table. On every catalog the
// tag's rows stay readable and no file it reaches is deleted: SQL catalogs
// make the commit conflict (and the retry keeps the tagged snapshot); the
// REST catalog, which cannot take icewright's requirement, lands the commit,
// drops the tag, and icewright then deletes nothing and fails loudly.
func TestExpireKeepsConcurrentTag(t *testing.T) {
	for _, b := range allBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			be := b.open(ctx, t)
			ns := testenv.UniqueName(t, "e2e")
			createNamespace(ctx, t, be.cat, ns)
			ident := table.Identifier{ns, "tagged"}
			var opts []catalog.CreateTableOpt
			if loc := be.location(ns, "tagged"); loc != "" {
				opts = append(opts, catalog.WithLocation(loc))
			}
			tbl, err := be.cat.CreateTable(ctx, ident, eventsSchema, opts...)
			if err != nil {
				t.Fatalf("create %v: %v", ident, err)
			}
			for i := int64(0); i < 4; i++ {
				tbl = appendRows(ctx, t, tbl, i*50, 50)
			}
			var ids []int64
			for _, s := range tbl.Metadata().Snapshots() {
				ids = append(ids, s.SnapshotID)
			}
			expire, tagged := ids[:len(ids)-1], ids[0]
			fsys, err := tbl.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before := listFiles(t, fsys, tbl.Location())

			cat := &tagWriterCatalog{CatalogIO: be.cat, writer: func() { tagSnapshot(ctx, t, be, ident, "audit", tagged) }}
			_, res, err := expiry.Expire(ctx, cat, tbl, expiry.Spec{SnapshotIDs: expire})
			switch {
			case errors.Is(err, providers.ErrConflict):
				if res.Committed || res.FilesDeleted != 0 {
					t.Fatalf("a conflicting expiry changed something: %+v", res)
				}
				// What apply does next: reload and retry; the tag protects
				// its snapshot now.
				cur, err := be.cat.LoadTable(ctx, ident)
				if err != nil {
					t.Fatal(err)
				}
				if _, res, err = expiry.Expire(ctx, be.cat, cur, expiry.Spec{SnapshotIDs: expire}); err != nil {
					t.Fatalf("retry: %v", err)
				}
				if res.SnapshotsExpired != len(expire)-1 {
					t.Fatalf("retry expired %d, want %d (all but the tagged one)", res.SnapshotsExpired, len(expire)-1)
				}
				cur, err = be.cat.LoadTable(ctx, ident)
				if err != nil {
					t.Fatal(err)
				}
				if id, ok := refOf(cur, "audit"); !ok || id != tagged {
					t.Fatalf("tag audit lost or moved: %d %v", id, ok)
				}
				if n := scanSnapshot(ctx, t, cur, tagged); n != 50 {
					t.Fatalf("tag reads %d rows, want 50", n)
				}
			case errors.Is(err, expiry.ErrRefDropped):
				t.Logf("catalog dropped the tag; icewright refused to delete: %v", err)
				if res.FilesDeleted != 0 {
					t.Fatalf("deleted %d files after the tag was dropped", res.FilesDeleted)
				}
				after := map[string]bool{}
				for _, p := range listFiles(t, fsys, tbl.Location()) {
					after[p] = true
				}
				for _, p := range before {
					if !after[p] {
						t.Fatalf("%s deleted although the tag reaching it was dropped", p)
					}
				}
				// Every file the tag reached is there: its snapshot still
				// reads all its rows from the metadata before the commit.
				old, err := table.NewFromLocation(ctx, ident, tbl.MetadataLocation(), tbl.FS, be.cat)
				if err != nil {
					t.Fatal(err)
				}
				if n := scanSnapshot(ctx, t, old, tagged); n != 50 {
					t.Fatalf("the tagged snapshot reads %d rows, want 50", n)
				}
			default:
				t.Fatalf("want a conflict or a loud refusal, got %v (%+v)", err, res)
			}
		})
	}
}

func scanSnapshot(ctx context.Context, t testing.TB, tbl *table.Table, id int64) int64 {
	t.Helper()
	at, err := tbl.Scan(table.WithSnapshotID(id)).ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan snapshot %d: %v", id, err)
	}
	defer at.Release()
	return at.NumRows()
}
