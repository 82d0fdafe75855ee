package expiry_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/testkit"
)

// refWriterCatalog runs a writer's commit on the real catalog right before
// icewright's expiry commit reaches it: the window between icewright loading the
// table and its commit landing, made certain instead of left to timing.
type refWriterCatalog struct {
	table.CatalogIO
	once   sync.Once
	writer func()
	// remote makes it behave like a catalog that validates requirements on
	// a server (REST): icewright cannot add requirements of its own there.
	remote bool
}

func (c *refWriterCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	c.once.Do(c.writer)
	return c.CatalogIO.CommitTable(ctx, ident, reqs, ups)
}

// Unwrap tells validatesLocally what is underneath, unless the wrapper
// plays a remote catalog.
func (c *refWriterCatalog) Unwrap() table.CatalogIO {
	if c.remote {
		return nil
	}
	return c.CatalogIO
}

// tagHistory is a table whose oldest snapshots alone reach some files:
// five appends, backdated, then a compaction and one more append.
func tagHistory(t *testing.T, l *testkit.Orders) *table.Table {
	t.Helper()
	tbl := l.History(nil, 5, 10*24*time.Hour)
	tbl, _, err := compact.Compact(context.Background(), tbl, compact.CompactSpec{Action: smallFilesCompaction(t, tbl)})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func tagRows(t *testing.T, l *testkit.Orders, name string) int64 {
	t.Helper()
	cur := l.Load()
	var (
		ref table.SnapshotRef
		ok  bool
	)
	for n, r := range cur.Metadata().Refs() {
		if n == name {
			ref, ok = r, true
		}
	}
	if !ok {
		t.Fatalf("tag %q is gone", name)
	}
	s, err := cur.Scan(table.WithSnapshotID(ref.SnapshotID)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan tag %q: %v", name, err)
	}
	defer s.Release()
	return s.NumRows()
}

// TestExpireConcurrentTagConflicts: a writer tags a snapshot that icewright is
// expiring, after icewright loaded the table. On a catalog that checks
// requirements here (sqlite), the commit conflicts instead of dropping the
// tag; the retry (what apply does) keeps the tagged snapshot.
func TestExpireConcurrentTagConflicts(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := tagHistory(t, l)
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1]
	tagged := ids[0]
	before := testkit.FilesUnder(t, tbl)
	cat := &refWriterCatalog{CatalogIO: l.Cat, writer: func() {
		if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{table.NewSetSnapshotRefUpdate("audit", tagged, table.TagRef, 0, 0, 0)}); err != nil {
			t.Errorf("writer's tag: %v", err)
		}
	}}
	_, res, err := expiry.Expire(ctx, cat, tbl, expiry.Spec{SnapshotIDs: expire})
	if !errors.Is(err, providers.ErrConflict) {
		t.Fatalf("want providers.ErrConflict, got %v (%+v)", err, res)
	}
	if res.Committed || res.FilesDeleted != 0 {
		t.Fatalf("a conflicting expiry changed something: %+v", res)
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s vanished after a conflict", p)
		}
	}
	if n := tagRows(t, l, "audit"); n != 10 {
		t.Fatalf("tag reads %d rows, want 10", n)
	}

	// The retry, on the table as it is now: the tag protects its snapshot.
	next, res, err := expiry.Expire(ctx, l.Cat, l.Load(), expiry.Spec{SnapshotIDs: expire})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotsExpired != len(expire)-1 || !strings.Contains(strings.Join(res.Skipped, "\n"), `head of ref "audit"`) {
		t.Fatalf("retry %+v", res)
	}
	testkit.AssertAllReferencedExist(t, next)
	if n := tagRows(t, l, "audit"); n != 10 {
		t.Fatalf("after the retry the tag reads %d rows, want 10", n)
	}
}

// TestExpireConcurrentTagDroppedDeletesNothing: where icewright cannot assert
// the refs set (a catalog that validates on its server), the commit lands
// and the catalog drops the tag; icewright then deletes nothing and fails,
// naming the tag, its snapshot and where its definition still is.
func TestExpireConcurrentTagDroppedDeletesNothing(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := tagHistory(t, l)
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1]
	tagged := ids[0]
	before := testkit.FilesUnder(t, tbl)
	cat := &refWriterCatalog{CatalogIO: l.Cat, remote: true, writer: func() {
		if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{table.NewSetSnapshotRefUpdate("audit", tagged, table.TagRef, 0, 0, 0)}); err != nil {
			t.Errorf("writer's tag: %v", err)
		}
	}}
	_, res, err := expiry.Expire(ctx, cat, tbl, expiry.Spec{SnapshotIDs: expire})
	if !errors.Is(err, expiry.ErrRefDropped) {
		t.Fatalf("want expiry.ErrRefDropped, got %v (%+v)", err, res)
	}
	for _, want := range []string{`tag "audit"`, "snapshot " + itoa(tagged), ".metadata.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	requireNothingDeleted(t, res, before, "a ref was dropped")
}

// requireNothingDeleted fails t when res counts a deletion or a file of
// before is gone.
func requireNothingDeleted(t *testing.T, res providers.ExecResult, before map[string]bool, why string) {
	t.Helper()
	if res.FilesDeleted != 0 {
		t.Fatalf("deleted %d files although %s", res.FilesDeleted, why)
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s deleted although %s", p, why)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// interruptingCatalog lands the commit and then calls after: a Ctrl-C
// arriving right after the expiry's commit, at a certain moment.
type interruptingCatalog struct {
	table.CatalogIO
	after func()
}

func (c *interruptingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	md, loc, err := c.CatalogIO.CommitTable(ctx, ident, reqs, ups)
	if err == nil {
		c.after()
	}
	return md, loc, err
}

func (c *interruptingCatalog) Unwrap() table.CatalogIO { return c.CatalogIO }

// TestExpireFinishesDeletionsAfterInterrupt: a first interrupt after the
// commit landed does not strand the released files: they are all deleted.
func TestExpireFinishesDeletionsAfterInterrupt(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := tagHistory(t, l)
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1]
	wantFiles, _, err := estimate(context.Background(), t, tbl, expire, nil)
	if err != nil || wantFiles == 0 {
		t.Fatalf("estimate %d, %v", wantFiles, err)
	}
	before := testkit.FilesUnder(t, tbl)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	abort, stop := context.WithCancel(context.Background())
	defer stop()
	next, res, err := expiry.Expire(ctx, &interruptingCatalog{CatalogIO: l.Cat, after: cancel}, tbl,
		expiry.Spec{SnapshotIDs: expire, Abort: abort})
	if err != nil {
		t.Fatalf("expiry interrupted after its commit: %v (%+v)", err, res)
	}
	if ctx.Err() == nil {
		t.Fatal("the hook did not interrupt")
	}
	if res.FilesDeleted != wantFiles || res.FilesLeft != 0 || len(res.DeleteErrors) != 0 {
		t.Fatalf("deleted %d of %d, left %d, errors %v", res.FilesDeleted, wantFiles, res.FilesLeft, res.DeleteErrors)
	}
	testkit.AssertAllReferencedExist(t, next)
	after := testkit.FilesUnder(t, next)
	gone := 0
	for p := range before {
		if !after[p] {
			gone++
		}
	}
	if int64(gone) != wantFiles {
		t.Fatalf("%d files gone from storage, want %d", gone, wantFiles)
	}
}

// TestExpireSecondInterruptStopsDeletions: a second interrupt (Abort)
// stops the deletions at once, and the result counts what was left.
// Progress is reported per batch, so batches of one let the interrupt
// come after the first file.
func TestExpireSecondInterruptStopsDeletions(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := tagHistory(t, l)
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1]
	wantFiles, _, err := estimate(context.Background(), t, tbl, expire, nil)
	if err != nil || wantFiles < 3 {
		t.Fatalf("estimate %d, %v", wantFiles, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	abort, stop := context.WithCancel(context.Background())
	defer stop()
	progress := func(done, total int64, unit string) {
		if done == 1 {
			stop() // the second Ctrl-C, during the deletions
			// The abort reaches the deletions through context.AfterFunc,
			// on a goroutine of its own; with one deletion at a time the
			// next one waits for this callback, so give that goroutine
			// time to run (on an idle machine the loop could otherwise
			// finish first).
			time.Sleep(200 * time.Millisecond)
		}
	}
	next, res, err := expiry.Expire(ctx, &interruptingCatalog{CatalogIO: l.Cat, after: cancel}, tbl,
		expiry.Spec{SnapshotIDs: expire, Abort: abort, Delete: objdel.Settings{Concurrency: 1, BatchSize: 1}, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesLeft == 0 || res.FilesDeleted == 0 || res.FilesDeleted+res.FilesLeft != wantFiles {
		t.Fatalf("deleted %d + left %d, want a split of %d", res.FilesDeleted, res.FilesLeft, wantFiles)
	}
	if !strings.Contains(res.Note, "were not deleted") || !strings.Contains(res.Note, "second interrupt") {
		t.Fatalf("note %q does not say what was left", res.Note)
	}
	testkit.AssertAllReferencedExist(t, next)
}

// TestExpireGCDisabledMidExpiryDeletesNothing: another engine sets
// gc.enabled=false after icewright loaded the table and before its expiry
// commit (the writer runs in that window, made certain). Nothing is
// deleted and the action is refused: on a catalog that validates here the
// commit itself is refused (a conflict; the retry sees the property and
// refuses), on one that validates on its server the commit lands on the
// writer's metadata and icewright deletes nothing.
func TestExpireGCDisabledMidExpiryDeletesNothing(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "remote"}[remote], func(t *testing.T) {
			ctx := context.Background()
			l := testkit.NewOrders(t)
			tbl := tagHistory(t, l)
			ids := testkit.SnapshotIDs(tbl)
			expire := ids[:len(ids)-1]
			if n, _, err := estimate(ctx, t, tbl, expire, nil); err != nil || n == 0 {
				t.Fatalf("the expiry would release %d files (%v): the test needs some", n, err)
			}
			before := testkit.FilesUnder(t, tbl)
			cat := &refWriterCatalog{CatalogIO: l.Cat, remote: remote, writer: func() {
				if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{
					table.NewSetPropertiesUpdate(iceberg.Properties{"gc.enabled": "false"})}); err != nil {
					t.Errorf("writer's gc.enabled=false: %v", err)
				}
			}}
			_, res, err := expiry.Expire(ctx, cat, tbl, expiry.Spec{SnapshotIDs: expire})
			if remote {
				if !errors.Is(err, providers.ErrRefused) || !strings.Contains(err.Error(), "gc.enabled=false") {
					t.Fatalf("want a refusal naming gc.enabled=false, got %v (%+v)", err, res)
				}
			} else {
				if !errors.Is(err, providers.ErrConflict) || res.Committed {
					t.Fatalf("want the commit refused as a conflict, got %v (%+v)", err, res)
				}
				// What apply does on a conflict: load the table again and retry.
				_, res, err = expiry.Expire(ctx, l.Cat, l.Load(), expiry.Spec{SnapshotIDs: expire})
				if !errors.Is(err, providers.ErrRefused) || res.Committed {
					t.Fatalf("retry: want a refusal, got %v (%+v)", err, res)
				}
			}
			requireNothingDeleted(t, res, before, "gc.enabled=false was set")
			if l.Load().Properties()["gc.enabled"] != "false" {
				t.Fatal("the writer's gc.enabled=false is gone")
			}
		})
	}
}
