package compact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
	"github.com/icewright/icewright/providers/testkit"
)

// toyEngine stands for Spark in the delegated run: its Run is whatever the
// test makes it do to the table (icewright's own rewrite, for a real replace
// snapshot), its Fingerprint what the test says each snapshot holds.
type toyEngine struct {
	run func(ctx context.Context) error
	fp  func(snapshotID int64) diff.RowFingerprint
}

func (toyEngine) Name() string { return "toy" }
func (toyEngine) Plan(diff.Delegation) (diff.EnginePlan, string) {
	return diff.EnginePlan{Statement: "TOY"}, ""
}
func (e toyEngine) Run(ctx context.Context, _ diff.EngineCall) (string, error) {
	return "toy did it", e.run(ctx)
}
func (e toyEngine) Fingerprint(_ context.Context, _ diff.EngineCall, id int64) (diff.RowFingerprint, error) {
	return e.fp(id), nil
}
func (toyEngine) Close() error                                          { return nil }
func (toyEngine) Doctor(context.Context, []string) []diff.DoctorFinding { return nil }

// TestDelegatedRunChecksTheEngineCommit drives runDelegated with an engine
// that commits through icewright's own rewrite: a good replace is checked and
// counted as the apply's; rows that differ after the engine committed fail
// the action loudly, naming the snapshot, which is not handed to expiry as
// verified; an engine that commits nothing, or fails, fails the action and
// leaves the metadata as it was.
func TestDelegatedRunChecksTheEngineCommit(t *testing.T) {
	ctx := context.Background()
	sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 1 << 30, MinInputFiles: 2, DeleteFileThreshold: 5}
	call := diff.EngineCall{Engine: "toy"}
	same := func(int64) diff.RowFingerprint { return diff.RowFingerprint{Rows: 40, Digest: "d"} }
	for _, tc := range []struct {
		name    string
		run     func(l *testkit.Orders) func(context.Context) error
		fp      func(head int64) func(int64) diff.RowFingerprint
		want    string // "" for success
		commits bool
	}{
		{"a checked replace", compactWith(sel), func(int64) func(int64) diff.RowFingerprint { return same }, "", true},
		{"rows differ after the commit", compactWith(sel), func(head int64) func(int64) diff.RowFingerprint {
			return func(id int64) diff.RowFingerprint {
				if id == head {
					return diff.RowFingerprint{Rows: 40, Digest: "d"}
				}
				return diff.RowFingerprint{Rows: 39, Digest: "e"}
			}
		}, "which icewright cannot undo", true},
		{"a replace that leaves planned files live", func(l *testkit.Orders) func(context.Context) error {
			return func(ctx context.Context) error {
				// Half the table per group, and only the first group.
				tbl := l.Load()
				_, bytes := kind.SummaryTotals(ctx, tbl)
				half := sel
				half.Target, half.Min, half.Max = bytes/2+1, bytes/2, bytes
				act := plannedCompaction(t, tbl, half, "binpack")
				act.Groups = act.Groups[:1] // max_bytes_per_run = 1
				_, _, err := Compact(ctx, tbl, CompactSpec{Action: act, Catalog: l.Cat})
				return err
			}
		}, func(int64) func(int64) diff.RowFingerprint { return same }, "2 of the 4 planned files are still live", true},
		{"a writer's append before the engine's commit is kept", func(l *testkit.Orders) func(context.Context) error {
			return func(ctx context.Context) error {
				testkit.AppendIDs(t, l.Load(), 100, 5)
				return compactWith(sel)(l)(ctx)
			}
		}, func(int64) func(int64) diff.RowFingerprint { return same }, "", true},
		{"no commit", func(*testkit.Orders) func(context.Context) error {
			return func(context.Context) error { return nil }
		}, func(int64) func(int64) diff.RowFingerprint { return same }, "committed no replace snapshot", false},
		{"an append is no rewrite", func(l *testkit.Orders) func(context.Context) error {
			return func(context.Context) error { testkit.AppendIDs(t, l.Load(), 100, 5); return nil }
		}, func(int64) func(int64) diff.RowFingerprint { return same }, "committed no replace snapshot", false},
		{"the engine fails", func(*testkit.Orders) func(context.Context) error {
			return func(context.Context) error { return errors.New("spark: [TABLE_OR_VIEW_NOT_FOUND] boom") }
		}, func(int64) func(int64) diff.RowFingerprint { return same }, "TABLE_OR_VIEW_NOT_FOUND", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			for i := range int64(4) {
				tbl = testkit.AppendIDs(t, tbl, i*10, 10)
			}
			head := tbl.CurrentSnapshot().SnapshotID
			eng := toyEngine{run: tc.run(l), fp: tc.fp(head)}
			next, res, err := runDelegated(ctx, tbl, delegatedRun{engine: eng, cat: l.Cat, sel: sel, now: time.Now()}, call)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if res.Committed != tc.commits {
				t.Errorf("committed = %v, want %v", res.Committed, tc.commits)
			}
			if tc.want == "" {
				want := 40
				if strings.Contains(tc.name, "append") {
					want = 45 // the writer's rows are kept
				}
				if ids := testkit.OrderIDs(t, l.Load()); len(ids) != want {
					t.Errorf("%d rows after the engine's commit, want %d", len(ids), want)
				}
				if len(res.Snapshots) != 1 || res.Snapshots[0] != next.CurrentSnapshot().SnapshotID || len(res.Partitions) != 1 ||
					res.Partitions[0].Status != diff.PartitionDone || res.Partitions[0].Snapshot != res.Snapshots[0] ||
					!strings.Contains(res.Partitions[0].Detail, "toy did it; snapshot ") || !strings.Contains(res.Partitions[0].Detail, "checked, 40 rows unchanged") {
					t.Errorf("result = %+v", res)
				}
				return
			}
			// The partition's entry says the failure once, without the
			// partition's name, which the entry has.
			if len(res.Partitions) != 1 || res.Partitions[0].Status != diff.PartitionFailed || !strings.HasSuffix(err.Error(), res.Partitions[0].Error) ||
				strings.Contains(res.Partitions[0].Error, "compaction of partition") {
				t.Errorf("partitions = %+v for %v", res.Partitions, err)
			}
			if len(res.Snapshots) != 0 {
				t.Errorf("an unverified engine snapshot is handed on as verified: %v", res.Snapshots)
			}
			if tc.commits && !strings.Contains(err.Error(), "snapshot ") {
				t.Errorf("the error does not name the snapshot: %v", err)
			}
			if !tc.commits && tc.name == "the engine fails" && l.Load().MetadataLocation() != tbl.MetadataLocation() {
				t.Errorf("metadata moved")
			}
		})
	}
}

// TestDelegatedPartitionsEachHaveAnOutcome: every delegated partition of
// an action has its own outcome, in the plan's order: after a failure the
// rest say they were not run, and the action's note counts them (issue 43,
// item 6: not one cell with every partition's account).
func TestDelegatedPartitionsEachHaveAnOutcome(t *testing.T) {
	ctx := context.Background()
	sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 1 << 30, MinInputFiles: 2, DeleteFileThreshold: 5}
	same := func(int64) diff.RowFingerprint { return diff.RowFingerprint{Rows: 40, Digest: "d"} }
	calls := []diff.EngineCall{{Engine: "toy"}, {Engine: "toy"}, {Engine: "toy"}}
	for _, tc := range []struct {
		name     string
		run      func(l *testkit.Orders) func(context.Context) error
		statuses []string
		note     string
	}{
		{"the first compacts, the second fails", func(l *testkit.Orders) func(context.Context) error {
			calls := 0
			return func(ctx context.Context) error {
				if calls++; calls > 1 {
					return errors.New("spark: boom")
				}
				return compactWith(sel)(l)(ctx)
			}
		}, []string{diff.PartitionDone, diff.PartitionFailed, diff.PartitionSkipped}, `3 partitions by engine "toy": 1 done, 1 skipped, 1 failed`},
		{"the first fails", func(*testkit.Orders) func(context.Context) error {
			return func(context.Context) error { return errors.New("spark: boom") }
		}, []string{diff.PartitionFailed, diff.PartitionSkipped, diff.PartitionSkipped}, `3 partitions by engine "toy": 2 skipped, 1 failed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			for i := range int64(4) {
				tbl = testkit.AppendIDs(t, tbl, i*10, 10)
			}
			run := delegatedRun{engine: toyEngine{run: tc.run(l), fp: same}, cat: l.Cat, sel: sel, now: time.Now()}
			_, er, err := runDelegatedCalls(ctx, tbl, run, calls, store.Result{})
			if err == nil || !strings.HasSuffix(err.Error(), "spark: boom") {
				t.Fatalf("err = %v", err)
			}
			var got []string
			for _, p := range er.Partitions {
				got = append(got, p.Status)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.statuses) || er.Note != tc.note {
				t.Errorf("outcomes %v, note %q; want %v, %q", got, er.Note, tc.statuses, tc.note)
			}
			if last := er.Partitions[len(er.Partitions)-1]; last.Detail != "not run: an earlier partition failed" || !slices.ContainsFunc(er.Partitions, func(p diff.PartitionOutcome) bool { return p.Error == "spark: boom" }) {
				t.Errorf("partitions = %+v", er.Partitions)
			}
		})
	}
}

// compactWith is an engine run that rewrites the table with icewright's own
// rewrite: a real replace snapshot.
func compactWith(sel diff.CompactionSelection) func(l *testkit.Orders) func(context.Context) error {
	return func(l *testkit.Orders) func(context.Context) error {
		return func(ctx context.Context) error {
			tbl := l.Load()
			act, err := PlanCompaction(ctx, tbl, sel, "binpack", time.Now())
			if err != nil {
				return err
			}
			_, _, err = Compact(ctx, tbl, CompactSpec{Action: act, Catalog: l.Cat})
			return err
		}
	}
}

// TestEngineCommitMayDropOnlyDanglingDeletes: an engine's replace may drop
// a delete file only when no live data file is left for it to apply to
// (docs/engines.md). A snapshot that drops a position delete file whose
// data file is still live is refused, naming the file; one that rewrites
// the data file and drops its delete with it (icewright's own rewrite, a
// real replace) passes.
func TestEngineCommitMayDropOnlyDanglingDeletes(t *testing.T) {
	ctx := context.Background()
	for _, dropAlone := range []bool{true, false} {
		t.Run(map[bool]string{true: "live delete dropped", false: "delete dropped with its data file"}[dropAlone], func(t *testing.T) {
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			for i := range int64(3) {
				tbl = testkit.AppendIDs(t, tbl, i*10, 10)
			}
			tbl = testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("id"), int64(3)))
			dels := testkit.LiveDeleteFiles(t, tbl)
			if len(dels) != 1 {
				t.Fatalf("setup: %d live delete files, want 1", len(dels))
			}
			if dropAlone {
				txn := tbl.NewTransaction()
				if err := txn.NewRewrite(nil).DeleteFile(dels[0]).Commit(ctx); err != nil {
					t.Fatal(err)
				}
				var err error
				if tbl, err = txn.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 1 << 30, MinInputFiles: 2, DeleteFileThreshold: 1}
				var err error
				if tbl, _, err = Compact(ctx, tbl, CompactSpec{Action: plannedCompaction(t, tbl, sel, "binpack"), Catalog: l.Cat}); err != nil {
					t.Fatal(err)
				}
			}
			snap := tbl.CurrentSnapshot()
			if snap.Summary.Operation != table.OpReplace {
				t.Fatalf("setup: the new snapshot is a %s", snap.Summary.Operation)
			}
			err := checkDelegated(ctx, tbl, snap, nil)
			switch {
			case dropAlone && (err == nil || !strings.Contains(err.Error(), dels[0].FilePath()) || !strings.Contains(err.Error(), "still apply")):
				t.Fatalf("a live delete file dropped: err = %v, want a refusal naming %s", err, dels[0].FilePath())
			case !dropAlone && err != nil:
				t.Fatalf("a dangling delete dropped with its data file refused: %v", err)
			}
		})
	}
}

// TestEngineCommitMayReplaceOnlyItsPartition: a delegated statement is
// bounded to one partition, and only that partition's rows are
// fingerprinted, so an engine's replace that also removes a data file of
// another partition is refused (without the rule it passed: no output, so
// no record count to disagree).
func TestEngineCommitMayReplaceOnlyItsPartition(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "sales.events", testkit.TableOptions{Partitioned: true}), 2, 10, 2)
	fs, mans := testkit.CurrentManifests(t, tbl)
	byPart := map[string]iceberg.DataFile{}
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			byPart[fmt.Sprint(e.DataFile().Partition())] = e.DataFile()
		}
	}
	if len(byPart) != 2 {
		t.Fatalf("setup: data files in %d partitions, want 2", len(byPart))
	}
	txn := tbl.NewTransaction()
	rw := txn.NewRewrite(nil)
	var planned []string
	for _, df := range byPart {
		rw.DeleteFile(df)
		if planned == nil {
			planned = []string{store.NormPath(df.FilePath())}
		}
	}
	if err := rw.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = checkDelegated(ctx, next, next.CurrentSnapshot(), planned)
	if err == nil || !strings.Contains(err.Error(), "replaces data files of 2 partitions") {
		t.Fatalf("err = %v, want a refusal of a replace spanning 2 partitions", err)
	}
}

// TestResultTotalsCountWhatThePlanCounts: apply's files and bytes of a
// compaction count the same files as the plan's compact line, the live
// data files at their size: a table with a delete file has the same
// bytes in the plan and in the result, not the delete file's on top
// (issue 43, item 6: the plan said 366.2 KiB, apply 401.9 KiB for the same
// 218 files).
func TestResultTotalsCountWhatThePlanCounts(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(3) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	tbl = testkit.DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("id"), int64(3)))
	// Every data file is planned (a delete file makes its data file a
	// candidate at threshold 1), so the plan's input is the whole table.
	sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 1 << 30, MinInputFiles: 2, DeleteFileThreshold: 1}
	act := plannedCompaction(t, tbl, sel, "binpack")
	files, bytes := kind.SummaryTotals(ctx, tbl)
	if int(files) != act.InputFiles || bytes != act.InputBytes {
		t.Errorf("result totals %d files, %d bytes; the plan's compact line %d files, %d bytes", files, bytes, act.InputFiles, act.InputBytes)
	}
	if total, _ := strconv.ParseInt(tbl.CurrentSnapshot().Summary.Properties["total-files-size"], 10, 64); total <= bytes {
		t.Fatalf("setup: total-files-size %d does not count the delete file on top of %d", total, bytes)
	}
}
