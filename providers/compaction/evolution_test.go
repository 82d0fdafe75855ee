package compaction

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// After partition-spec evolution, files of the old and the new spec are
// planned and rewritten separately, each output keeping its input's spec.
func TestSpecEvolutionNeverMixesSpecs(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "evolving", partitioned: true})
	tbl = appendMany(t, tbl, 4, 1500, regions)
	txn := tbl.NewTransaction()
	if err := txn.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 2}, "id_bucket").Commit(); err != nil {
		t.Fatal(err)
	}
	var err error
	if tbl, err = txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		rec := genRows(uint64(100+c), int64(10_000+c*1500), 1500, regions)
		tbl = appendBatch(t, tbl, rec)
		rec.Release()
	}
	before := rowStrings(t, tbl)
	specsBefore := map[int32]int{}
	for _, task := range liveTasks(t, tbl) {
		specsBefore[task.File.SpecID()]++
	}
	if len(specsBefore) != 2 {
		t.Fatalf("setup: want files in 2 specs, got %v", specsBefore)
	}

	groups := groupsAll(t, tbl)
	perSpec := map[int]int{}
	for _, g := range groups {
		perSpec[g.SpecID]++
		for _, task := range g.Tasks {
			if int(task.File.SpecID()) != g.SpecID {
				t.Fatalf("group of spec %d holds a spec %d file", g.SpecID, task.File.SpecID())
			}
		}
	}
	if perSpec[0] != 4 || perSpec[1] != 8 {
		t.Fatalf("want 4 old-spec and 8 new-spec groups, got %v", perSpec)
	}

	res, err := Run(context.Background(), tbl, groups, Options{Strategy: Binpack, TargetFileSize: 1 << 20, Catalog: env.cat})
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, rowStrings(t, res.Table))
	outSpecs := map[int32]int{}
	for _, task := range liveTasks(t, res.Table) {
		outSpecs[task.File.SpecID()]++
	}
	if outSpecs[0] != 4 || outSpecs[1] != 8 {
		t.Fatalf("want one output per partition of each spec (4 + 8), got %v", outSpecs)
	}

	// A hand-made group mixing the specs is refused before anything is read.
	mixed := Group{SpecID: 0, Tasks: append(append([]table.FileScanTask{}, groups[0].Tasks...), groups[len(groups)-1].Tasks...)}
	if _, err := Run(context.Background(), res.Table, []Group{mixed}, Options{}); !errors.Is(err, ErrRefused) {
		t.Fatalf("mixed-spec group: want ErrRefused, got %v", err)
	}
}

func TestRefusesV3RowLineage(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "v3", props: iceberg.Properties{"format-version": "3"}})
	tbl = appendMany(t, tbl, 3, 100, regions)
	before := rowStrings(t, tbl)
	_, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("v3 table: want ErrRefused, got %v", err)
	}
	requireSameRows(t, before, rowStrings(t, env.load(t, "v3")))
}

// max_bytes_per_run leaves the groups beyond the budget for the next run.
func TestMaxBytesPerRun(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "budget", partitioned: true})
	tbl = appendMany(t, tbl, 3, 1000, regions)
	groups := groupsAll(t, tbl)
	res, err := Run(context.Background(), tbl, groups, Options{Strategy: Binpack, MaxBytesPerRun: groups[0].Bytes() + groups[1].Bytes(), PartialProgress: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed() != 2 {
		t.Fatalf("want 2 groups within the byte budget, got %d", res.Committed())
	}
	skipped := 0
	for _, g := range res.Groups {
		if g.Skipped != "" {
			skipped++
		}
	}
	if skipped != 2 {
		t.Fatalf("want 2 groups skipped, got %d", skipped)
	}
}
