package compaction

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// `where` plans only the matching partitions, and never drops the rows of a
// rewritten file that do not match (residuals are not applied on rewrite).
func TestWhereRestrictsPlanning(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "scoped", partitioned: true})
	tbl = appendMany(t, tbl, 4, 1000, regions)
	before := rowStrings(t, tbl)
	// The filter mixes a partition predicate with a row predicate: files are
	// selected by it, rows are not.
	where := iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("region"), "eu"), iceberg.GreaterThan(iceberg.Reference("y"), int32(50000)))
	groups, err := PlanGroups(context.Background(), tbl, PlanConfig{Selection: selectAll(), Where: where, PerPartition: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Partition != "region=eu" {
		t.Fatalf("want only region=eu planned, got %d groups (%v)", len(groups), groups)
	}
	res, err := Run(context.Background(), tbl, groups, Options{Strategy: Binpack})
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, rowStrings(t, res.Table))
}

// One broken group: with partial_progress the others commit; without it
// nothing commits and every staged file is removed.
func TestPartialProgressIsolatesAFailingGroup(t *testing.T) {
	for _, partial := range []bool{true, false} {
		t.Run(map[bool]string{true: "partial", false: "atomic"}[partial], func(t *testing.T) {
			env := newEnv(t)
			tbl := env.create(t, tableSpec{name: "broken", partitioned: true})
			tbl = appendMany(t, tbl, 3, 1000, regions)
			groups := groupsAll(t, tbl)
			onDisk := parquetFiles(t, env.warehouse)
			// Lose one input file of one partition behind the catalog's back.
			victim := groups[1].Tasks[0].File.FilePath()
			if err := os.Remove(strings.TrimPrefix(victim, "file://")); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), tbl, groups, Options{Strategy: Binpack, PartialProgress: partial, Catalog: env.cat})
			if err == nil {
				t.Fatal("a group with a missing input file must fail")
			}
			committed := res.Committed()
			if partial && committed != len(groups)-1 {
				t.Fatalf("partial progress: want %d groups committed, got %d", len(groups)-1, committed)
			}
			if !partial && committed != 0 {
				t.Fatalf("atomic: want nothing committed, got %d", committed)
			}
			for i, g := range res.Groups {
				if g.Committed {
					continue
				}
				for _, p := range g.OutputPaths {
					if _, err := os.Stat(strings.TrimPrefix(p, "file://")); !os.IsNotExist(err) {
						t.Fatalf("group %d: staged %s not removed", i, p)
					}
				}
			}
			// No stray file: what is on disk is the inputs (minus the lost
			// one) plus the outputs of committed groups, nothing else.
			want := len(onDisk) - 1
			for _, g := range res.Groups {
				if g.Committed {
					want += g.OutputFiles
				}
			}
			if got := len(parquetFiles(t, env.warehouse)); got != want {
				t.Fatalf("%d parquet files on disk, want %d: staged files leaked", got, want)
			}
			cur := env.load(t, "broken")
			if partial {
				if op := cur.CurrentSnapshot().Summary.Operation; op != "replace" {
					t.Fatalf("want replace snapshots for the good groups, got %s", op)
				}
			} else if cur.CurrentSnapshot().SnapshotID != tbl.CurrentSnapshot().SnapshotID {
				t.Fatal("atomic run changed the table")
			}
		})
	}
}

func parquetFiles(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Files larger than read.split.target-size come out of scan planning as
// several row-group tasks; the engine rewrites each file once, whole.
func TestSplitTasksAreRewrittenWhole(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "splits"})
	tbl = appendMany(t, tbl, 4, 5000, regions)
	// First pass: files of several row groups (row groups close at a
	// quarter of the target).
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: Binpack, TargetFileSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	txn := res.Table.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{"read.split.target-size": "4096"}); err != nil {
		t.Fatal(err)
	}
	tbl, err = txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tasks := liveTasks(t, tbl)
	files := map[string]bool{}
	for _, task := range tasks {
		files[task.File.FilePath()] = true
	}
	if len(tasks) <= len(files) {
		t.Fatalf("setup: scan planning split no file (%d tasks, %d files)", len(tasks), len(files))
	}
	before := rowStrings(t, tbl)
	// Hand the engine the raw split tasks, as a caller using iceberg-go's
	// planning would.
	res, err = Run(context.Background(), tbl, []Group{{SpecID: 0, Tasks: tasks}}, Options{Strategy: Binpack, TargetFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, rowStrings(t, res.Table))
	if res.Groups[0].InputFiles != len(files) {
		t.Fatalf("input files %d, want %d whole files", res.Groups[0].InputFiles, len(files))
	}
	groups, err := PlanGroups(context.Background(), res.Table, PlanConfig{Selection: selectAll()})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		seen := map[string]bool{}
		for _, task := range g.Tasks {
			if seen[task.File.FilePath()] {
				t.Fatalf("planned group holds %s twice", task.File.FilePath())
			}
			seen[task.File.FilePath()] = true
		}
	}
}
