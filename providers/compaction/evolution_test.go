package compaction

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

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

// v3: deletion vectors are applied and removed, and every surviving row
// keeps its _row_id and _last_updated_sequence_number through the rewrite.
func TestV3DeletionVectorsAndRowLineage(t *testing.T) {
	for _, strategy := range []Strategy{Binpack, Sort} {
		t.Run(string(strategy), func(t *testing.T) {
			env := newEnv(t)
			tbl := env.create(t, tableSpec{name: "v3", partitioned: true, order: testOrder(), props: iceberg.Properties{
				"format-version": "3", table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
			tbl = appendMany(t, tbl, 4, 1500, regions)
			var err error
			if tbl, err = tbl.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("x"), int32(-300)), nil); err != nil {
				t.Fatal(err)
			}
			if _, _, dv := countDeletes(liveTasks(t, tbl)); dv == 0 {
				t.Fatal("setup: the v3 merge-on-read delete wrote no deletion vector")
			}
			before := rowStrings(t, tbl)
			lineageBefore := lineage(t, tbl)
			if len(lineageBefore) != len(before) {
				t.Fatalf("setup: %d lineage rows for %d rows", len(lineageBefore), len(before))
			}
			res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{Strategy: strategy, TargetFileSize: 1 << 20, Catalog: env.cat})
			if err != nil {
				t.Fatal(err)
			}
			after := env.load(t, "v3")
			requireSameRows(t, before, rowStrings(t, after))
			if p, e, d := countDeletes(liveTasks(t, after)); p+e+d != 0 {
				t.Fatalf("delete files left: %d position, %d equality, %d DVs", p, e, d)
			}
			got := lineage(t, after)
			for id, want := range lineageBefore {
				if got[id] != want {
					t.Fatalf("row %d: lineage %v before, %v after", id, want, got[id])
				}
			}
			if res.Committed() == 0 {
				t.Fatal("nothing committed")
			}
		})
	}
}

// lineage maps each live row's id to its (_row_id, _last_updated_sequence_number).
func lineage(t testing.TB, tbl *table.Table) map[int64][2]int64 {
	t.Helper()
	_, it, err := tbl.Scan(table.WithRowLineage(), table.WithSelectedFields("id", iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][2]int64{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		idx := func(name string) *array.Int64 {
			return rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.Int64)
		}
		ids, rowIDs, seqs := idx("id"), idx(iceberg.RowIDColumnName), idx(iceberg.LastUpdatedSequenceNumberColumnName)
		for i := range ids.Len() {
			if rowIDs.IsNull(i) || seqs.IsNull(i) {
				t.Fatalf("row %d has no lineage", ids.Value(i))
			}
			out[ids.Value(i)] = [2]int64{rowIDs.Value(i), seqs.Value(i)}
		}
		rec.Release()
	}
	return out
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
