package expiry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

func TestExpireDeletesExactlyWhatIsNoLongerReachable(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(nil, 5, 10*24*time.Hour)
	// Compact, so the small files are reachable only from old snapshots.
	tbl, _, err := compact.Compact(ctx, tbl, compact.CompactSpec{Action: smallFilesCompaction(t, tbl)})
	if err != nil {
		t.Fatal(err)
	}
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1] // all but the compaction snapshot
	files, bytes, err := estimate(ctx, t, tbl, expire, nil)
	if err != nil {
		t.Fatal(err)
	}
	oldLists := map[string]bool{}
	for _, id := range expire {
		oldLists[testkit.LocalPath(t, tbl.SnapshotByID(id).ManifestList)] = true
	}
	before := testkit.FilesUnder(t, tbl)

	next, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: expire})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotsExpired != len(expire) || !res.Committed {
		t.Fatalf("result %+v", res)
	}
	if res.FilesDeleted != files || res.BytesFreed != bytes {
		t.Fatalf("deleted %d files / %d bytes, estimate said %d / %d", res.FilesDeleted, res.BytesFreed, files, bytes)
	}
	// 6 manifest lists, 6 manifests, 6 small data files at least.
	if res.FilesDeleted < 18 {
		t.Fatalf("only %d files deleted", res.FilesDeleted)
	}
	after := testkit.FilesUnder(t, next)
	for p := range oldLists {
		if after[p] {
			t.Errorf("manifest list %s of an expired snapshot survived", p)
		}
	}
	// The expiry commit itself adds one metadata.json.
	if int64(len(before)+1-len(after)) != res.FilesDeleted {
		t.Fatalf("%d files vanished (plus one new metadata file), result says %d", len(before)+1-len(after), res.FilesDeleted)
	}
	if got := testkit.SnapshotIDs(next); len(got) != 1 {
		t.Fatalf("snapshots left: %v", got)
	}
	testkit.AssertAllReferencedExist(t, l.Load())
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 60))
}

func TestExpireRefusesGCDisabled(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(iceberg.Properties{"gc.enabled": "false"}, 3, 10*24*time.Hour)
	before := testkit.FilesUnder(t, tbl)
	_, _, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: testkit.SnapshotIDs(tbl)[:2]})
	if !errors.Is(err, providers.ErrRefused) {
		t.Fatalf("want providers.ErrRefused, got %v", err)
	}
	cur := l.Load()
	if cur.MetadataLocation() != tbl.MetadataLocation() || len(testkit.SnapshotIDs(cur)) != 4 {
		t.Fatal("table changed despite gc.enabled=false")
	}
	if len(testkit.FilesUnder(t, cur)) != len(before) {
		t.Fatal("files deleted despite gc.enabled=false")
	}
}

func TestExpireKeepsRefHeadsAndRefReachableFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(nil, 4, 10*24*time.Hour)
	ids := testkit.SnapshotIDs(tbl)
	tagged := ids[1]
	if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{
		table.NewSetSnapshotRefUpdate("q3-close", tagged, table.TagRef, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	tbl = l.Load()
	// The plan (wrongly) lists the tagged snapshot: it must survive.
	next, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: ids[:3]})
	if err != nil {
		t.Fatal(err)
	}
	if next.SnapshotByID(tagged) == nil {
		t.Fatal("tag head expired")
	}
	if res.SnapshotsExpired != 2 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "q3-close") {
		t.Fatalf("result %+v", res)
	}
	testkit.AssertAllReferencedExist(t, l.Load())
	// The tag still reads its rows.
	s, err := l.Load().Scan(table.WithSnapshotID(tagged)).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if s.NumRows() != 20 {
		t.Fatalf("tag reads %d rows, want 20", s.NumRows())
	}
}

func TestExpireConflictDeletesNothing(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	stale := l.History(nil, 3, 10*24*time.Hour)
	testkit.AppendIDs(t, l.Load(), 1000, 3)
	before := testkit.FilesUnder(t, stale)
	_, res, err := expiry.Expire(ctx, l.Cat, stale, expiry.Spec{SnapshotIDs: testkit.SnapshotIDs(stale)[:2]})
	if !errors.Is(err, providers.ErrConflict) {
		t.Fatalf("want providers.ErrConflict, got %v", err)
	}
	if res.FilesDeleted != 0 {
		t.Fatal("deleted files after a conflict")
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s vanished after a failed expiry", p)
		}
	}
	if got := len(testkit.SnapshotIDs(l.Load())); got != 5 {
		t.Fatalf("%d snapshots, want 5", got)
	}
}

// TestExpireRetentionRecheck: ids the plan listed that no longer qualify on
// the version being committed against are kept and reported.
func TestExpireRetentionRecheck(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(nil, 5, 10*24*time.Hour)
	ids := testkit.SnapshotIDs(tbl) // s1..s5 old, s6 young
	next, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{
		SnapshotIDs: ids[:5],
		Retention:   &expiry.RetentionCheck{MaxAge: 48 * time.Hour, MinSnapshots: 4, Now: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotsExpired != 2 || len(res.Skipped) != 3 {
		t.Fatalf("expired %d, skipped %v", res.SnapshotsExpired, res.Skipped)
	}
	if !slices.Equal(testkit.SnapshotIDs(next), ids[2:]) {
		t.Fatalf("left %v, want %v", testkit.SnapshotIDs(next), ids[2:])
	}
	testkit.AssertAllReferencedExist(t, l.Load())
}

func TestExpireUnknownOutcomeDeletesNothing(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(nil, 3, 10*24*time.Hour)
	before := testkit.FilesUnder(t, tbl)
	_, res, err := expiry.Expire(ctx, &testkit.FlakyCatalog{CatalogIO: l.Cat, Land: true}, tbl, expiry.Spec{SnapshotIDs: testkit.SnapshotIDs(tbl)[:2]})
	if !errors.Is(err, providers.ErrCommitUnknown) {
		t.Fatalf("want providers.ErrCommitUnknown, got %v", err)
	}
	if res.FilesDeleted != 0 {
		t.Fatal("files deleted after an unknown commit outcome")
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s deleted", p)
		}
	}
	testkit.AssertAllReferencedExist(t, l.Load())
}

// TestReleasedFilesSpilled: the expiry's sorted merge gives the same files
// when both sides spill to disk (limit 2) as in memory.
func TestReleasedFilesSpilled(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.History(nil, 6, 10*24*time.Hour)
	tbl, _, err := compact.Compact(ctx, tbl, compact.CompactSpec{Action: smallFilesCompaction(t, tbl), Catalog: l.Cat})
	if err != nil {
		t.Fatal(err)
	}
	ids := testkit.SnapshotIDs(tbl)
	gone := ids[:len(ids)-1]
	// The kept side: a table holding only the last snapshot.
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveSnapshots(gone, false); err != nil {
		t.Fatal(err)
	}
	km, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	kept := table.New(tbl.Identifier(), km, tbl.MetadataLocation(), tbl.FS, nil)
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inMem, err := expiry.ReleasedFiles(ctx, fs, tbl.Metadata(), gone, kept, reach.DefaultSpillLimit)
	if err != nil {
		t.Fatal(err)
	}
	spilled, err := expiry.ReleasedFiles(ctx, fs, tbl.Metadata(), gone, kept, 2)
	if err != nil {
		t.Fatal(err)
	}
	key := func(paths []string) []string {
		out := slices.Clone(paths)
		slices.Sort(out)
		return out
	}
	if len(inMem) < 18 || !slices.Equal(key(inMem), key(spilled)) {
		t.Fatalf("in memory %d files, spilled %d files", len(inMem), len(spilled))
	}
	for _, p := range spilled {
		if p == "" {
			t.Fatal("a spilled record lost its path")
		}
	}
}

// A live file named by a file: URI whose path changes when decoded keeps
// its literal file whatever spelling an expired snapshot used: here the
// expired snapshot names the file by its bare literal path and the live one
// by the escaped URI (the spelling Java writes at a file: location), so the
// two keys differ, and only the live URI's literal name (kept with its
// decoded one) says that the file is live. The file the expired snapshots
// alone reach is deleted.
func TestExpireKeepsLiteralFileOfLiveEscapedURI(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	first := liveFiles(ctx, t, tbl)
	if len(first) != 1 {
		t.Fatalf("setup: %d files", len(first))
	}
	src := testkit.LocalPath(t, first[0].FilePath())
	lit := filepath.Join(filepath.Dir(src), "ts=2023-08-22T09%3A15%3A20", "f.parquet")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(lit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lit, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// A bare path (literal to every reader), then the escaped URI.
	tbl = testkit.CommitDataFileAt(t, tbl, first[0], lit, first[0])
	cur := liveFiles(ctx, t, tbl)[0]
	tbl = testkit.CommitDataFileAt(t, tbl, cur, "file://"+lit, cur)
	ids := testkit.SnapshotIDs(tbl)
	_, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: ids[:len(ids)-1]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lit); err != nil {
		t.Fatalf("the live file under its literal name was deleted (%+v): %v", res, err)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("the file only expired snapshots reach survived: %v", err)
	}
}

func liveFiles(ctx context.Context, t *testing.T, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, task := range tasks {
		out = append(out, task.File)
	}
	return out
}

// smallFilesCompaction is the compaction a plan makes of tbl under
// testkit.SmallFiles (compact.PlanCompaction); it fails the test on an
// error.
func smallFilesCompaction(t testing.TB, tbl *table.Table) *diff.CompactAction {
	t.Helper()
	act, err := compact.PlanCompaction(context.Background(), tbl, testkit.SmallFiles, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return act
}
