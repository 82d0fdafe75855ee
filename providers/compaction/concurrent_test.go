package compaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// A writer appends to the same partition after the engine has read and
// written its outputs and before it commits. The commit must keep the
// appended rows (iceberg-go rebases the replace onto the new snapshot).
func TestConcurrentAppendLosesNothing(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(map[bool]string{false: "atomic", true: "partial"}[partial], func(t *testing.T) {
			env := newEnv(t)
			tbl := env.create(t, tableSpec{name: "busy", partitioned: true})
			tbl = appendMany(t, tbl, 6, 2000, regions)
			before := rowStrings(t, tbl)

			var once sync.Once
			var appendErr error
			progress := func(e Event) {
				if e.Phase != "written" {
					return
				}
				once.Do(func() {
					other := env.load(t, "busy")
					rec := genRows(999, 1_000_000, 500, []string{"eu"})
					defer rec.Release()
					rdr := recordReader(t, rec)
					defer rdr.Release()
					_, appendErr = other.Append(context.Background(), rdr, nil)
				})
			}
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
				Strategy: Binpack, TargetFileSize: 1 << 20, Progress: progress, PartialProgress: partial, Catalog: env.cat,
			})
			if appendErr != nil {
				t.Fatalf("concurrent append: %v", appendErr)
			}
			if err != nil {
				t.Fatalf("compaction after a concurrent append: %v", err)
			}
			final := rowStrings(t, env.load(t, "busy"))
			extra := genRows(999, 1_000_000, 500, []string{"eu"})
			defer extra.Release()
			want := slices.Clone(before)
			want = append(want, recordStrings(t, extra)...)
			slices.Sort(want)
			requireSameRows(t, want, final)
			if res.Committed() != 4 {
				t.Fatalf("want 4 groups committed, got %d", res.Committed())
			}
		})
	}
}

// A concurrent delete that targets a file being replaced makes the replace
// invalid: the engine must fail cleanly, remove its staged files, and leave
// the table as the other writer left it.
func TestConcurrentDeleteOnRewrittenFileFailsCleanly(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "conflict",
		props: iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
	tbl = appendMany(t, tbl, 4, 2000, regions)

	var once sync.Once
	var delErr error
	progress := func(e Event) {
		if e.Phase != "written" {
			return
		}
		once.Do(func() {
			other := env.load(t, "conflict")
			_, delErr = other.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("x"), int32(-450)), nil)
		})
	}
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
		Strategy: Binpack, TargetFileSize: 1 << 20, Progress: progress, Catalog: env.cat,
	})
	if delErr != nil {
		t.Fatalf("concurrent delete: %v", delErr)
	}
	if err == nil {
		t.Fatal("replace committed over a concurrent delete of a rewritten file")
	}
	if !errors.Is(err, table.ErrConflictingDeleteFiles) {
		t.Fatalf("want the rewrite's conflict validation to reject the commit, got: %v", err)
	}
	for _, g := range res.Groups {
		if g.Committed {
			t.Fatal("group reported committed")
		}
		if len(g.OutputPaths) == 0 {
			t.Fatal("no staged outputs recorded")
		}
		for _, p := range g.OutputPaths {
			if _, statErr := os.Stat(strings.TrimPrefix(p, "file://")); !os.IsNotExist(statErr) {
				t.Fatalf("staged file %s not removed (%v)", p, statErr)
			}
		}
	}
	cur := env.load(t, "conflict")
	if op := cur.CurrentSnapshot().Summary.Operation; op == table.OpReplace {
		t.Fatal("table has a replace snapshot")
	}
}

// Partial progress, two partitions: while the first group is being
// committed, another writer deletes rows of the second partition. The
// second group's rows were planned before that delete, so committing it
// would bring the deleted rows back; it must fail instead, even though the
// first commit already rebased onto the delete.
func TestPartialProgressDoesNotResurrectConcurrentDeletes(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "resurrect", partitioned: true,
		props: iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
	tbl = appendMany(t, tbl, 4, 2000, []string{"eu", "us"})
	groups := groupsAll(t, tbl)
	if len(groups) != 2 {
		t.Fatalf("setup: want 2 groups, got %d", len(groups))
	}
	other := strings.TrimPrefix(groups[1].Partition, "region=")

	var once sync.Once
	var delErr error
	progress := func(e Event) {
		if e.Phase != "written" || e.Group != 0 {
			return
		}
		once.Do(func() {
			_, delErr = env.load(t, "resurrect").Delete(context.Background(),
				iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("region"), other), iceberg.LessThan(iceberg.Reference("x"), int32(-400))), nil)
		})
	}
	res, err := Run(context.Background(), tbl, groups, Options{
		Strategy: Binpack, TargetFileSize: 1 << 20, Progress: progress, PartialProgress: true, Catalog: env.cat,
	})
	if delErr != nil {
		t.Fatalf("concurrent delete: %v", delErr)
	}
	final := env.load(t, "resurrect")
	for _, r := range rowStrings(t, final) {
		fields := strings.Split(r, "|")
		if fields[1] == other && fields[3] != "∅" {
			var x int
			if _, err := fmt.Sscan(fields[3], &x); err == nil && x < -400 {
				t.Fatalf("deleted row came back: %s", r)
			}
		}
	}
	if res.Groups[1].Committed {
		t.Fatal("the second group committed over a concurrent delete of its rows")
	}
	if err == nil {
		t.Fatal("want an error for the second group")
	}
	if !res.Groups[0].Committed {
		t.Fatalf("the first group should commit: %v", res.Groups[0].Err)
	}
}

// flakyCatalog commits and then reports a transport error, as a catalog
// whose response was lost would.
type flakyCatalog struct {
	table.CatalogIO
}

func (f flakyCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if _, _, err := f.CatalogIO.CommitTable(ctx, ident, reqs, updates); err != nil {
		return nil, "", err
	}
	return nil, "", errors.New("connection reset by peer")
}

// A commit whose answer was lost may have landed: the engine must keep its
// files (the table references them) and say the outcome is unknown.
func TestUnknownCommitOutcomeKeepsFiles(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "lost", partitioned: true})
	tbl = appendMany(t, tbl, 3, 1000, regions)
	before := rowStrings(t, tbl)
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Binpack, Catalog: flakyCatalog{env.cat}})
	if !errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("want ErrCommitUnknown, got %v", err)
	}
	kept := 0
	for _, g := range res.Groups {
		for _, p := range g.OutputPaths {
			if _, err := os.Stat(strings.TrimPrefix(p, "file://")); err != nil {
				t.Fatalf("staged %s removed although the commit may have landed: %v", p, err)
			}
			kept++
		}
	}
	if kept == 0 {
		t.Fatal("no staged outputs recorded")
	}
	// It did land here: the table is whole and readable.
	cur := env.load(t, "lost")
	if op := cur.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("setup: the flaky catalog should have committed, current op %s", op)
	}
	requireSameRows(t, before, rowStrings(t, cur))
}
