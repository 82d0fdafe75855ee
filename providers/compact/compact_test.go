package compact

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

func TestCompactPreservesRowsAndReplacesFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(8) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	var progressed int
	next, res, err := Compact(ctx, tbl, CompactSpec{Action: plannedCompaction(t, tbl, testkit.SmallFiles, "binpack"),
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
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 80))
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
	_, res, err = Compact(ctx, next, CompactSpec{Action: plannedCompaction(t, next, testkit.SmallFiles, "")})
	if err != nil || !res.NoOp || res.Committed {
		t.Fatalf("second compaction: %+v %v", res, err)
	}
}

func TestCompactConflictRemovesStagedFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(5) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	stale := tbl
	testkit.AppendIDs(t, l.Load(), 50, 7) // concurrent writer
	before := testkit.FilesUnder(t, stale)

	_, res, err := Compact(ctx, stale, CompactSpec{Action: plannedCompaction(t, stale, testkit.SmallFiles, ""), Catalog: l.Cat})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want store.ErrConflict, got %v", err)
	}
	if res.StagedRemoved == 0 {
		t.Fatalf("no staged file removed: %+v", res)
	}
	for p := range testkit.FilesUnder(t, stale) {
		if !before[p] {
			t.Errorf("failed compaction left %s behind", p)
		}
	}
	cur := l.Load()
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 57))
	testkit.AssertAllReferencedExist(t, cur)
}

func TestCompactUnknownOutcomeKeepsStagedFiles(t *testing.T) {
	for _, land := range []bool{false, true} {
		t.Run(map[bool]string{false: "lost", true: "landed"}[land], func(t *testing.T) {
			ctx := context.Background()
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			for i := range int64(5) {
				tbl = testkit.AppendIDs(t, tbl, i*10, 10)
			}
			_, res, err := Compact(ctx, tbl, CompactSpec{Action: plannedCompaction(t, tbl, testkit.SmallFiles, ""), Catalog: &testkit.FlakyCatalog{CatalogIO: l.Cat, Land: land}})
			if !errors.Is(err, store.ErrCommitUnknown) {
				t.Fatalf("want store.ErrCommitUnknown, got %v", err)
			}
			if res.StagedRemoved != 0 || len(res.StagedKept) == 0 {
				t.Fatalf("staged files removed on an unknown outcome: %+v", res)
			}
			for _, p := range res.StagedKept {
				if _, err := os.Stat(testkit.LocalPath(t, p)); err != nil {
					t.Fatalf("kept file %s is gone", p)
				}
			}
			cur := l.Load()
			testkit.AssertAllReferencedExist(t, cur)
			testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 50))
			if land && cur.CurrentSnapshot().Summary.Operation != table.OpReplace {
				t.Fatal("the landed compaction is not the current snapshot")
			}
		})
	}
}

// TestCompactRebasesOverConcurrentAppend: with Rebase the compaction lands
// on top of a writer's append; the writer's rows stay, nothing leaks.
func TestCompactRebasesOverConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(5) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	stale := tbl
	testkit.AppendIDs(t, l.Load(), 50, 7)
	next, res, err := Compact(ctx, stale, CompactSpec{Action: plannedCompaction(t, stale, testkit.SmallFiles, ""), Catalog: l.Cat, Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.RowsBefore != 50 || res.RowsAfter != 50 {
		t.Fatalf("result %+v", res)
	}
	cur := l.Load()
	if cur.MetadataLocation() != next.MetadataLocation() {
		t.Fatal("returned table is not the catalog's")
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 57))
	testkit.AssertAllReferencedExist(t, cur)
}

// TestCompactProgressFromConcurrentGroups: with several groups rewritten at
// once, each group's "written" event reaches the progress hook from its own
// goroutine; the bytes done are counted once per group and reported in
// order, never decreasing (run it with -race: the count was a variable
// every group's goroutine wrote).
func TestCompactProgressFromConcurrentGroups(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := l.CreateTable(t, "db.events", testkit.TableOptions{Partitioned: true})
	tbl = testkit.Append(t, tbl, 24, 20, 6) // 6 partitions of 4 small files
	var (
		mu      sync.Mutex
		reports []int64
		total   int64
	)
	_, res, err := Compact(ctx, tbl, CompactSpec{Action: plannedCompaction(t, tbl, testkit.SmallFiles, "binpack"), MaxConcurrent: 6,
		Progress: func(done, tot int64, unit string) {
			mu.Lock()
			defer mu.Unlock()
			reports, total = append(reports, done), tot
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed {
		t.Fatalf("result %+v", res)
	}
	if len(reports) < 7 || reports[len(reports)-1] != total || total <= 0 {
		t.Fatalf("progress %v of %d: want 0, one report per group, ending at the total", reports, total)
	}
	if !slices.IsSorted(reports) {
		t.Fatalf("progress went back: %v", reports)
	}
}

// plannedCompaction is the compaction a plan makes of tbl under sel and
// strategy (PlanCompaction at fixedNow); it fails the test on an error.
func plannedCompaction(t testing.TB, tbl *table.Table, sel diff.CompactionSelection, strategy string) *diff.CompactAction {
	t.Helper()
	act, err := PlanCompaction(context.Background(), tbl, sel, strategy, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

// fixedNow is the clock of these tests (providers' observation tests have
// the same).
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
