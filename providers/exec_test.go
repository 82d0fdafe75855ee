package providers

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

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/internal/store"
)

var smallFiles = diff.CompactionSelection{
	Target: 128 << 20, Min: 96 << 20, Max: 230 << 20, MinInputFiles: 2, DeleteFileThreshold: 5, DeleteRatio: 0.3,
}

func TestApplyMetadataOneCommitAndNoOps(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(iceberg.Properties{"keep.me": "x", "old.key": "1"})
	tbl = appendRows(t, tbl, 0, 10)
	logBefore := execSeqCount(tbl.Metadata().PreviousFiles())

	order := []diff.SortField{{Transform: "identity", Column: "id", Descending: true}}
	next, res, err := ApplyMetadata(ctx, tbl, MetadataChange{
		Set: map[string]string{"write.target-file-size-bytes": "134217728"}, Remove: []string{"old.key", "absent.key"},
		SortOrder: &order,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed {
		t.Fatal("expected a commit")
	}
	if got := execSeqCount(next.Metadata().PreviousFiles()); got != logBefore+1 {
		t.Fatalf("properties and sort order took %d metadata versions, want 1", got-logBefore)
	}
	p := next.Properties()
	if p["write.target-file-size-bytes"] != "134217728" || p["keep.me"] != "x" {
		t.Fatalf("properties: %v", p)
	}
	if _, ok := p["old.key"]; ok {
		t.Fatal("old.key not removed")
	}
	if next.SortOrder().Len() != 1 || next.SortOrder().Field(0).Direction != table.SortDESC {
		t.Fatalf("sort order: %v", next.SortOrder())
	}

	// The same change again writes nothing.
	again, res, err := ApplyMetadata(ctx, next, MetadataChange{
		Set: map[string]string{"write.target-file-size-bytes": "134217728"}, Remove: []string{"old.key"},
		SortOrder: &order,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || !res.NoOp || again.MetadataLocation() != next.MetadataLocation() {
		t.Fatalf("re-apply committed: %+v", res)
	}
	if l.load().MetadataLocation() != next.MetadataLocation() {
		t.Fatal("catalog moved on a no-op")
	}
}

func TestApplyMetadataConflictKeepsWriterCommit(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	stale := appendRows(t, l.create(nil), 0, 10)
	appendRows(t, l.load(), 10, 5) // a writer commits after we loaded

	_, res, err := ApplyMetadata(ctx, stale, MetadataChange{Set: map[string]string{"a": "b"}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	if res.Committed {
		t.Fatal("reported committed")
	}
	cur := l.load()
	if _, ok := cur.Properties()["a"]; ok {
		t.Fatal("property landed despite the conflict")
	}
	mustEqualIDs(t, scanIDs(t, cur), seq(0, 15))
}

func TestCompactPreservesRowsAndReplacesFiles(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(nil)
	for i := range int64(8) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	var progressed int
	next, res, err := Compact(ctx, tbl, CompactSpec{Selection: smallFiles, Strategy: "binpack",
		Progress: func(done, total int64, unit string) { progressed++ }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.FilesBefore != 8 || res.FilesAfter != 1 {
		t.Fatalf("result %+v", res)
	}
	if res.RowsBefore != 80 || res.RowsAfter != 80 {
		t.Fatalf("rows %d -> %d", res.RowsBefore, res.RowsAfter)
	}
	if progressed == 0 {
		t.Fatal("no progress reported")
	}
	mustEqualIDs(t, scanIDs(t, l.load()), seq(0, 80))
	tasks, err := next.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("%d files after compaction", len(tasks))
	}
	if op := next.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("compaction committed a %q snapshot, want replace", op)
	}

	// Nothing left to do: no commit.
	_, res, err = Compact(ctx, next, CompactSpec{Selection: smallFiles})
	if err != nil || !res.NoOp || res.Committed {
		t.Fatalf("second compaction: %+v %v", res, err)
	}
}

func TestCompactConflictRemovesStagedFiles(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(nil)
	for i := range int64(5) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	stale := tbl
	appendRows(t, l.load(), 50, 7) // concurrent writer
	before := filesUnder(t, stale)

	_, res, err := Compact(ctx, stale, CompactSpec{Selection: smallFiles, Catalog: l.cat})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	if res.StagedRemoved == 0 {
		t.Fatalf("no staged file removed: %+v", res)
	}
	for p := range filesUnder(t, stale) {
		if !before[p] {
			t.Errorf("failed compaction left %s behind", p)
		}
	}
	cur := l.load()
	mustEqualIDs(t, scanIDs(t, cur), seq(0, 57))
	assertAllReferencedExist(t, cur)
}

func TestRewriteManifests(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(nil)
	for i := range int64(6) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	next, res, err := RewriteManifests(ctx, tbl, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.FilesBefore != 6 || res.FilesAfter >= 6 {
		t.Fatalf("result %+v", res)
	}
	mustEqualIDs(t, scanIDs(t, next), seq(0, 60))
	_, res, err = RewriteManifests(ctx, next, 8<<20)
	if err != nil || res.Committed {
		t.Fatalf("second rewrite: %+v %v", res, err)
	}
}

// history builds n snapshots, backdated by age, then one young snapshot.
func history(t *testing.T, l *execLake, props iceberg.Properties, n int, age time.Duration) *table.Table {
	t.Helper()
	tbl := l.create(props)
	for i := range int64(n) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	tbl = l.backdate(tbl, age)
	return appendRows(t, tbl, int64(n)*10, 10)
}

func snapshotIDs(tbl *table.Table) []int64 {
	var ids []int64
	for _, s := range tbl.Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

func TestExpireDeletesExactlyWhatIsNoLongerReachable(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, nil, 5, 10*24*time.Hour)
	// Compact, so the small files are reachable only from old snapshots.
	tbl, _, err := Compact(ctx, tbl, CompactSpec{Selection: smallFiles})
	if err != nil {
		t.Fatal(err)
	}
	ids := snapshotIDs(tbl)
	expire := ids[:len(ids)-1] // all but the compaction snapshot
	files, bytes, err := expiryEstimate(ctx, tbl, expire)
	if err != nil {
		t.Fatal(err)
	}
	oldLists := map[string]bool{}
	for _, id := range expire {
		oldLists[localOf(t, tbl.SnapshotByID(id).ManifestList)] = true
	}
	before := filesUnder(t, tbl)

	next, res, err := ExpireSnapshots(ctx, l.cat, tbl, ExpireSpec{SnapshotIDs: expire})
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
	after := filesUnder(t, next)
	for p := range oldLists {
		if after[p] {
			t.Errorf("manifest list %s of an expired snapshot survived", p)
		}
	}
	// The expiry commit itself adds one metadata.json.
	if int64(len(before)+1-len(after)) != res.FilesDeleted {
		t.Fatalf("%d files vanished (plus one new metadata file), result says %d", len(before)+1-len(after), res.FilesDeleted)
	}
	if got := snapshotIDs(next); len(got) != 1 {
		t.Fatalf("snapshots left: %v", got)
	}
	assertAllReferencedExist(t, l.load())
	mustEqualIDs(t, scanIDs(t, l.load()), seq(0, 60))
}

func TestExpireRefusesGCDisabled(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, iceberg.Properties{"gc.enabled": "false"}, 3, 10*24*time.Hour)
	before := filesUnder(t, tbl)
	_, _, err := ExpireSnapshots(ctx, l.cat, tbl, ExpireSpec{SnapshotIDs: snapshotIDs(tbl)[:2]})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("want ErrRefused, got %v", err)
	}
	cur := l.load()
	if cur.MetadataLocation() != tbl.MetadataLocation() || len(snapshotIDs(cur)) != 4 {
		t.Fatal("table changed despite gc.enabled=false")
	}
	if len(filesUnder(t, cur)) != len(before) {
		t.Fatal("files deleted despite gc.enabled=false")
	}
}

func TestExpireKeepsRefHeadsAndRefReachableFiles(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, nil, 4, 10*24*time.Hour)
	ids := snapshotIDs(tbl)
	tagged := ids[1]
	if _, _, err := l.cat.CommitTable(ctx, l.ident, nil, []table.Update{
		table.NewSetSnapshotRefUpdate("q3-close", tagged, table.TagRef, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	tbl = l.load()
	// The plan (wrongly) lists the tagged snapshot: it must survive.
	next, res, err := ExpireSnapshots(ctx, l.cat, tbl, ExpireSpec{SnapshotIDs: ids[:3]})
	if err != nil {
		t.Fatal(err)
	}
	if next.SnapshotByID(tagged) == nil {
		t.Fatal("tag head expired")
	}
	if res.SnapshotsExpired != 2 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "q3-close") {
		t.Fatalf("result %+v", res)
	}
	assertAllReferencedExist(t, l.load())
	// The tag still reads its rows.
	s, err := l.load().Scan(table.WithSnapshotID(tagged)).ToArrowTable(ctx)
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
	l := newExecLake(t)
	stale := history(t, l, nil, 3, 10*24*time.Hour)
	appendRows(t, l.load(), 1000, 3)
	before := filesUnder(t, stale)
	_, res, err := ExpireSnapshots(ctx, l.cat, stale, ExpireSpec{SnapshotIDs: snapshotIDs(stale)[:2]})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	if res.FilesDeleted != 0 {
		t.Fatal("deleted files after a conflict")
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s vanished after a failed expiry", p)
		}
	}
	if got := len(snapshotIDs(l.load())); got != 5 {
		t.Fatalf("%d snapshots, want 5", got)
	}
}

func TestRemoveOrphanFilesRules(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := appendRows(t, l.create(nil), 0, 10)
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	root := localOf(t, tbl.Location())
	data := filepath.Join(root, "data")
	write := func(p string, mtime time.Time) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldStray := write(filepath.Join(data, "old-stray.parquet"), old)
	youngStray := write(filepath.Join(data, "young-stray.parquet"), now)
	outside := write(filepath.Join(l.dir, "outside.parquet"), old)
	target := write(filepath.Join(l.dir, "elsewhere", "target.parquet"), old)
	link := filepath.Join(data, "link.parquet")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	linkDir := filepath.Join(data, "linkdir")
	if err := os.Symlink(filepath.Dir(target), linkDir); err != nil {
		t.Fatal(err)
	}
	// A live data file listed by mistake, made old.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live := localOf(t, tasks[0].File.FilePath())
	if err := os.Chtimes(live, old, old); err != nil {
		t.Fatal(err)
	}
	// And the current metadata file and a manifest list, made old too.
	metaFile := localOf(t, tbl.MetadataLocation())
	manifestList := localOf(t, tbl.CurrentSnapshot().ManifestList)
	for _, p := range []string{metaFile, manifestList} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	spec := OrphanSpec{
		Paths: []string{oldStray, youngStray, outside, link, filepath.Join(linkDir, "target.parquet"), live,
			filepath.Join(data, "gone.parquet"), metaFile, manifestList},
		OlderThan: 3 * 24 * time.Hour, Now: now,
	}

	if _, err := RemoveOrphanFiles(ctx, l.cat, tbl, OrphanSpec{Paths: spec.Paths, OlderThan: time.Hour, Now: now}); !errors.Is(err, ErrRefused) {
		t.Fatalf("older_than 1h: want ErrRefused, got %v", err)
	}

	res, err := RemoveOrphanFiles(ctx, l.cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 1 {
		t.Fatalf("deleted %d, want only the old stray: %+v", res.FilesDeleted, res)
	}
	if _, err := os.Stat(oldStray); !os.IsNotExist(err) {
		t.Fatal("old stray survived")
	}
	for _, p := range []string{youngStray, outside, target, live, metaFile, manifestList} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s was deleted: %v", p, err)
		}
	}
	if _, err := os.Lstat(link); err != nil {
		t.Fatal("symlink deleted")
	}
	if len(res.Skipped) != 8 {
		t.Fatalf("skipped %d: %v", len(res.Skipped), res.Skipped)
	}
	mustEqualIDs(t, scanIDs(t, l.load()), seq(0, 10))
}

func TestRemoveOrphanFilesRefusesGCDisabled(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := appendRows(t, l.create(iceberg.Properties{"gc.enabled": "false"}), 0, 10)
	p := filepath.Join(localOf(t, tbl.Location()), "data", "stray.parquet")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	_, err := RemoveOrphanFiles(ctx, l.cat, tbl, OrphanSpec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: time.Now()})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("want ErrRefused, got %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("file deleted despite gc.enabled=false")
	}
}

func TestNormPath(t *testing.T) {
	cases := map[string]string{
		"s3a://b/k//x/":        "s3://b/k/x",
		"/tmp/a//b":            "file:///tmp/a/b",
		"file:///tmp/a/b":      "file:///tmp/a/b",
		"S3://bucket/key.avro": "s3://bucket/key.avro",
	}
	for in, want := range cases {
		if got := store.NormPath(in); got != want {
			t.Errorf("store.NormPath(%q) = %q, want %q", in, got, want)
		}
	}
	roots := OrphanRoots("file:///w/t", map[string]string{"write.data.path": "s3a://b/d"}, store.NormPath)
	if execRootOf(roots, "/w/t/data/x") == "" || execRootOf(roots, "s3://b/d/f") == "" {
		t.Fatal("in-scope path rejected")
	}
	for _, p := range []string{"/w/t", "/w/tx/data", "/w/t/../etc/passwd", "s3://b/dx"} {
		if execRootOf(roots, p) != "" {
			t.Errorf("%s accepted as in scope", p)
		}
	}
	_ = slices.Contains[[]string]
}

// TestExpireRetentionRecheck: ids the plan listed that no longer qualify on
// the version being committed against are kept and reported.
func TestExpireRetentionRecheck(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, nil, 5, 10*24*time.Hour)
	ids := snapshotIDs(tbl) // s1..s5 old, s6 young
	next, res, err := ExpireSnapshots(ctx, l.cat, tbl, ExpireSpec{
		SnapshotIDs: ids[:5],
		Retention:   &RetentionCheck{MaxAge: 48 * time.Hour, MinSnapshots: 4, Now: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotsExpired != 2 || len(res.Skipped) != 3 {
		t.Fatalf("expired %d, skipped %v", res.SnapshotsExpired, res.Skipped)
	}
	if !slices.Equal(snapshotIDs(next), ids[2:]) {
		t.Fatalf("left %v, want %v", snapshotIDs(next), ids[2:])
	}
	assertAllReferencedExist(t, l.load())
}

// flakyCatalog fails every commit with an error that is not a conflict (a
// timeout, a reset connection): the outcome is unknown to the caller. With
// land set, the commit reaches the real catalog first, as a timeout after
// the server applied it would.
type flakyCatalog struct {
	table.CatalogIO
	land bool
}

func (f *flakyCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if f.land {
		if _, _, err := f.CatalogIO.CommitTable(ctx, ident, reqs, ups); err != nil {
			return nil, "", err
		}
	}
	return nil, "", errors.New("read tcp: i/o timeout")
}

func TestCompactUnknownOutcomeKeepsStagedFiles(t *testing.T) {
	for _, land := range []bool{false, true} {
		t.Run(map[bool]string{false: "lost", true: "landed"}[land], func(t *testing.T) {
			ctx := context.Background()
			l := newExecLake(t)
			tbl := l.create(nil)
			for i := range int64(5) {
				tbl = appendRows(t, tbl, i*10, 10)
			}
			_, res, err := Compact(ctx, tbl, CompactSpec{Selection: smallFiles, Catalog: &flakyCatalog{CatalogIO: l.cat, land: land}})
			if !errors.Is(err, ErrCommitUnknown) {
				t.Fatalf("want ErrCommitUnknown, got %v", err)
			}
			if res.StagedRemoved != 0 || len(res.StagedKept) == 0 {
				t.Fatalf("staged files removed on an unknown outcome: %+v", res)
			}
			for _, p := range res.StagedKept {
				if _, err := os.Stat(localOf(t, p)); err != nil {
					t.Fatalf("kept file %s is gone", p)
				}
			}
			cur := l.load()
			assertAllReferencedExist(t, cur)
			mustEqualIDs(t, scanIDs(t, cur), seq(0, 50))
			if land && cur.CurrentSnapshot().Summary.Operation != table.OpReplace {
				t.Fatal("the landed compaction is not the current snapshot")
			}
		})
	}
}

func TestExpireUnknownOutcomeDeletesNothing(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, nil, 3, 10*24*time.Hour)
	before := filesUnder(t, tbl)
	_, res, err := ExpireSnapshots(ctx, &flakyCatalog{CatalogIO: l.cat, land: true}, tbl, ExpireSpec{SnapshotIDs: snapshotIDs(tbl)[:2]})
	if !errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("want ErrCommitUnknown, got %v", err)
	}
	if res.FilesDeleted != 0 {
		t.Fatal("files deleted after an unknown commit outcome")
	}
	for p := range before {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s deleted", p)
		}
	}
	assertAllReferencedExist(t, l.load())
}

func TestRemoveOrphanFilesQuarantine(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := appendRows(t, l.create(nil), 0, 10)
	root := localOf(t, tbl.Location())
	p := filepath.Join(root, "data", "sub", "stray.parquet")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := RemoveOrphanFiles(ctx, l.cat, tbl, OrphanSpec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: time.Now(), Quarantine: true, RunID: "run1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesQuarantined != 1 || res.FilesDeleted != 0 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("original still there")
	}
	moved := filepath.Join(root, QuarantineDir, "run1", "data", "sub", "stray.parquet")
	if b, err := os.ReadFile(moved); err != nil || string(b) != "stray" {
		t.Fatalf("quarantined copy: %q %v", b, err)
	}
}

// TestCompactRebasesOverConcurrentAppend: with Rebase the compaction lands
// on top of a writer's append; the writer's rows stay, nothing leaks.
func TestCompactRebasesOverConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(nil)
	for i := range int64(5) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	stale := tbl
	appendRows(t, l.load(), 50, 7)
	next, res, err := Compact(ctx, stale, CompactSpec{Selection: smallFiles, Catalog: l.cat, Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.RowsBefore != 50 || res.RowsAfter != 50 {
		t.Fatalf("result %+v", res)
	}
	cur := l.load()
	if cur.MetadataLocation() != next.MetadataLocation() {
		t.Fatal("returned table is not the catalog's")
	}
	mustEqualIDs(t, scanIDs(t, cur), seq(0, 57))
	assertAllReferencedExist(t, cur)
}

// TestReleasedFilesSpilled: the expiry's sorted merge gives the same files
// when both sides spill to disk (limit 2) as in memory.
func TestReleasedFilesSpilled(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := history(t, l, nil, 6, 10*24*time.Hour)
	tbl, _, err := Compact(ctx, tbl, CompactSpec{Selection: smallFiles, Catalog: l.cat})
	if err != nil {
		t.Fatal(err)
	}
	ids := snapshotIDs(tbl)
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
	inMem, err := releasedFiles(ctx, fs, tbl.Metadata(), gone, kept, defaultSpillLimit)
	if err != nil {
		t.Fatal(err)
	}
	spilled, err := releasedFiles(ctx, fs, tbl.Metadata(), gone, kept, 2)
	if err != nil {
		t.Fatal(err)
	}
	key := func(fs []fileRef) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.path)
		}
		slices.Sort(out)
		return out
	}
	if len(inMem) < 18 || !slices.Equal(key(inMem), key(spilled)) {
		t.Fatalf("in memory %d files, spilled %d files", len(inMem), len(spilled))
	}
	for _, f := range spilled {
		if f.path == "" {
			t.Fatal("a spilled record lost its path")
		}
	}
}

func TestRewriteManifestsConflictRemovesStagedFiles(t *testing.T) {
	ctx := context.Background()
	l := newExecLake(t)
	tbl := l.create(nil)
	for i := range int64(6) {
		tbl = appendRows(t, tbl, i*10, 10)
	}
	stale := tbl
	appendRows(t, l.load(), 60, 4)
	before := filesUnder(t, stale)
	_, res, err := RewriteManifests(ctx, stale, 8<<20)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	if res.StagedRemoved == 0 {
		t.Fatalf("nothing removed: %+v", res)
	}
	for p := range filesUnder(t, stale) {
		if !before[p] {
			t.Errorf("failed manifest rewrite left %s behind", p)
		}
	}
	cur := l.load()
	mustEqualIDs(t, scanIDs(t, cur), seq(0, 64))
	assertAllReferencedExist(t, cur)
}
