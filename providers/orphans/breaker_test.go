package orphans

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/testkit"
)

// tripAfter is a remove that works n times, then stalls the breaker's
// limit of attempts (as the S3 client does against a paused server) and
// fails without an answer. It counts the removes sent.
func tripAfter(ctx context.Context, n int, sent *[]string) func(string) error {
	return func(p string) error {
		*sent = append(*sent, p)
		if len(*sent) <= n {
			return os.Remove(p)
		}
		b := bound.BreakerOf(ctx)
		for range bound.DefaultStallLimit {
			b.Stalled(time.Second)
		}
		return fmt.Errorf("remove %s: %w", p, b.Err())
	}
}

// TestRemoveOrphanFilesStopsWhenStoreUnresponsive: once the table's store
// is judged unresponsive, the sweep sends no new delete (within a batch,
// not only at its end); the delete without an answer is in a place
// unknown and every other file not deleted is named as still in place.
func TestRemoveOrphanFilesStopsWhenStoreUnresponsive(t *testing.T) {
	ctx := bound.WithBreaker(context.Background())
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	var paths []string
	for i := range 10 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", fmt.Sprintf("s%d.parquet", i)), "x", now.Add(-10*24*time.Hour)))
	}
	var sent []string
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: now, DeleteConcurrency: 1}
	spec.remove = tripAfter(ctx, 2, &sent)
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 {
		t.Errorf("%d deletes sent, want 3 (none after the store was judged unresponsive)", len(sent))
	}
	if res.FilesDeleted != 2 || res.FilesPlaceUnknown != 1 || len(res.DeleteErrors) != 8 {
		t.Fatalf("deleted %d, unknown %d, errors %v", res.FilesDeleted, res.FilesPlaceUnknown, res.DeleteErrors)
	}
	places := map[string]int{}
	for _, e := range res.DeleteErrors {
		switch {
		case strings.Contains(e, ": place unknown: "):
			places["unknown"]++
		case strings.Contains(e, ": not deleted, still in place: not started: "+bound.ErrUnresponsive.Error()):
			places["in place"]++
		}
	}
	if places["unknown"] != 1 || places["in place"] != 7 {
		t.Errorf("places %v, want 1 unknown and 7 in place: %v", places, res.DeleteErrors)
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 3))
}

// TestQuarantinePurgeStopsWhenStoreUnresponsive: a purge whose store is
// judged unresponsive sends no new delete, names every file left in the
// run, and keeps the run's manifest (the next purge finds the rest).
func TestQuarantinePurgeStopsWhenStoreUnresponsive(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 6 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", fmt.Sprintf("q%d.parquet", i)), "x", t0.Add(-10*24*time.Hour)))
	}
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true, QuarantineFor: 7 * 24 * time.Hour}
	if res, err := Remove(context.Background(), l.Cat, tbl, spec); err != nil || res.FilesQuarantined != 6 {
		t.Fatalf("quarantine: %+v %v", res, err)
	}
	ctx := bound.WithBreaker(context.Background())
	later := Spec{OlderThan: 72 * time.Hour, Now: t0.Add(8 * 24 * time.Hour)}
	later.PurgeRuns = plannedRuns(t, l.Load(), later.Now)
	var sent []string
	later.remove = tripAfter(ctx, 2, &sent)
	res, err := Remove(ctx, l.Cat, l.Load(), later)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 {
		t.Errorf("%d deletes sent, want 3 (none after the store was judged unresponsive)", len(sent))
	}
	var unknown, left int
	for _, e := range res.DeleteErrors {
		switch {
		case strings.Contains(e, ": place unknown: "):
			unknown++
		case strings.Contains(e, ": not purged, still in the quarantine: not started: "):
			left++
		}
	}
	if res.FilesDeleted != 2 || unknown != 1 || left != 3 {
		t.Errorf("purged %d, %d unknown, %d left named, want 2, 1, 3: %v", res.FilesDeleted, unknown, left, res.DeleteErrors)
	}
	run := newRunID(t0)
	if _, err := os.Stat(filepath.Join(root, QuarantineDir, run, QuarantineManifestName)); err != nil {
		t.Errorf("the run's manifest is gone: %v", err)
	}
}

// TestRestoreStopsWhenStoreUnresponsive: a restore whose store was judged
// unresponsive moves nothing more back: every file is refused, saying
// why, and the run's manifest is kept for the next restore.
func TestRestoreStopsWhenStoreUnresponsive(t *testing.T) {
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 3 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", fmt.Sprintf("r%d.parquet", i)), "x", t0.Add(-10*24*time.Hour)))
	}
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: t0, Quarantine: true}
	if res, err := Remove(context.Background(), l.Cat, tbl, spec); err != nil || res.FilesQuarantined != 3 {
		t.Fatalf("quarantine: %+v %v", res, err)
	}
	ctx := bound.WithBreaker(context.Background())
	for range bound.DefaultStallLimit {
		bound.BreakerOf(ctx).Stalled(time.Second)
	}
	run := newRunID(t0)
	rr, err := Restore(ctx, "lake.sales.orders", run, func(context.Context) (*table.Table, error) { return l.Load(), nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Restored) != 0 || len(rr.Refused) != 3 || !strings.Contains(rr.Refused[0], bound.ErrUnresponsive.Error()) || rr.ManifestKept == "" {
		t.Fatalf("restore with the store judged unresponsive: %+v", rr)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s moved back: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, QuarantineDir, run, QuarantineManifestName)); err != nil {
		t.Errorf("the run's manifest is gone: %v", err)
	}
}

// TestQuarantineStopsWhenStoreUnresponsiveMidBatch: the store is judged
// unresponsive while other moves are still under way. The files not
// started are named while those moves finish (CI once died here of a
// concurrent map write: run it with -race); every file is counted once,
// in its place, and the table's rows are untouched.
func TestQuarantineStopsWhenStoreUnresponsiveMidBatch(t *testing.T) {
	ctx := bound.WithBreaker(context.Background())
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 3)
	root := testkit.LocalPath(t, tbl.Location())
	now := time.Now()
	var paths []string
	for i := range 12 {
		paths = append(paths, writeOld(t, filepath.Join(root, "data", fmt.Sprintf("q%02d.parquet", i)), "x", now.Add(-10*24*time.Hour)))
	}
	var (
		mu    sync.Mutex
		calls int
	)
	tripped := make(chan struct{})
	spec := Spec{Paths: paths, OlderThan: 72 * time.Hour, Now: now, Quarantine: true, QuarantineFor: time.Hour, DeleteConcurrency: 3}
	spec.move = func(src string, do func() (placeState, error)) (placeState, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case n == 2:
			b := bound.BreakerOf(ctx)
			for range bound.DefaultStallLimit {
				b.Stalled(time.Second)
			}
			close(tripped)
			return stateUnknown, fmt.Errorf("move %s: %w", src, b.Err())
		case n > 2:
			// Still moving while the rest are named as not started.
			<-tripped
			time.Sleep(50 * time.Millisecond)
		}
		return do()
	}
	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if calls > 2+spec.DeleteConcurrency {
		t.Errorf("%d moves started, want at most %d (none after the store was judged unresponsive)", calls, 2+spec.DeleteConcurrency)
	}
	left := int64(len(paths) - calls)
	if res.FilesQuarantined != int64(calls-1) || res.FilesPlaceUnknown != 1 || res.FilesNotMoved != left || int64(len(res.DeleteErrors)) != 1+left {
		t.Fatalf("%d moves: quarantined %d, unknown %d, not moved %d, errors %v", calls, res.FilesQuarantined, res.FilesPlaceUnknown, res.FilesNotMoved, res.DeleteErrors)
	}
	var inPlace int64
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			inPlace++
		}
	}
	if inPlace != left+1 {
		t.Errorf("%d files still in place, want %d", inPlace, left+1)
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 3))
}
