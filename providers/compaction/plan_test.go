package compaction

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"
)

// groupSignature renders groups as sorted "partition: files" lines.
func groupSignature(tbl *table.Table, groups [][]table.FileScanTask) []string {
	var out []string
	for _, g := range groups {
		var paths []string
		for _, t := range g {
			paths = append(paths, t.File.FilePath())
		}
		slices.Sort(paths)
		out = append(out, partitionName(tbl, g[0].File)+": "+strings.Join(paths, ","))
	}
	slices.Sort(out)
	return out
}

// The per-partition planner yields exactly iceberg-go's groups (Analyze
// over every task), on identity, time, void, bucket and truncate
// partitions (the last two by the fallback pass), with position deletes
// attached.
func TestPlanPartitionsMatchesIcebergGo(t *testing.T) {
	cases := []struct {
		name     string
		field    iceberg.PartitionField
		fallback bool // no row filter selects a partition
	}{
		{"identity", iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}}, false},
		{"day", iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}}, false},
		{"month", iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_month", Transform: iceberg.MonthTransform{}}, false},
		{"void", iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region_void", Transform: iceberg.VoidTransform{}}, false},
		{"bucket", iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 3}}, true},
		{"truncate_long", iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_trunc", Transform: iceberg.TruncateTransform{Width: 1000}}, true},
		{"truncate_string", iceberg.PartitionField{SourceIDs: []int{6}, FieldID: 1000, Name: "name_trunc", Transform: iceberg.TruncateTransform{Width: 6}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			spec := iceberg.NewPartitionSpec(c.field)
			tbl, err := env.cat.CreateTable(context.Background(), table.Identifier{"ns", "p"}, testSchema(),
				catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{
					"format-version": "2", table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
			if err != nil {
				t.Fatal(err)
			}
			tbl = appendMany(t, tbl, 8, 400, regions)
			if tbl, err = tbl.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("x"), int32(-450)), nil); err != nil {
				t.Fatal(err)
			}
			sel := icecompaction.DefaultConfig()
			sel.TargetFileSizeBytes = 64 << 10
			sel.MinFileSizeBytes = 48 << 10
			sel.MaxFileSizeBytes = 115 << 10
			sel.MinInputFiles = 2
			ref, err := icecompaction.Analyze(context.Background(), tbl, sel)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]table.FileScanTask
			deletesWant := 0
			for _, g := range ref.Groups {
				want = append(want, g.Tasks)
				for _, task := range g.Tasks {
					deletesWant += len(task.DeleteFiles) + len(task.DeletionVectorFiles) + len(task.EqualityDeleteFiles)
				}
			}
			if len(want) == 0 {
				t.Fatal("setup: iceberg-go plans no group")
			}
			for _, limit := range []int{-1, 0} { // per partition, single pass
				groups, err := PlanGroups(context.Background(), tbl, PlanConfig{Selection: sel, SinglePassMaxFiles: limit})
				if err != nil {
					t.Fatal(err)
				}
				var got [][]table.FileScanTask
				deletesGot := 0
				for _, g := range groups {
					got = append(got, g.Tasks)
					for _, task := range g.Tasks {
						deletesGot += len(task.DeleteFiles) + len(task.DeletionVectorFiles) + len(task.EqualityDeleteFiles)
					}
				}
				ws, gs := groupSignature(tbl, want), groupSignature(tbl, got)
				if !slices.Equal(ws, gs) {
					t.Fatalf("limit %d: groups differ:\niceberg-go %d: %v\nicewright     %d: %v", limit, len(ws), ws, len(gs), gs)
				}
				if deletesGot != deletesWant || deletesWant == 0 {
					t.Fatalf("limit %d: delete files attached: icewright %d, iceberg-go %d", limit, deletesGot, deletesWant)
				}
			}
			// Identity, time and void partitions are planned one by one
			// (no full pass); bucket and truncate ones take the fallback.
			st, err := partitionStats(context.Background(), tbl, sel, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range st.order {
				_, ok, err := planPartition(context.Background(), tbl, PlanConfig{Selection: sel}, st.parts[key])
				if err != nil {
					t.Fatal(err)
				}
				if ok == c.fallback {
					t.Fatalf("partition %s: planned by filter = %v", key, ok)
				}
			}
		})
	}
}

func TestPartitionFilterCoversTransforms(t *testing.T) {
	sc := testSchema()
	for _, c := range []struct {
		tr   iceberg.Transform
		src  int
		v    any
		want bool
	}{
		{iceberg.IdentityTransform{}, 2, "eu", true},
		{iceberg.IdentityTransform{}, 2, nil, true},
		{iceberg.DayTransform{}, 3, int32(20000), true},
		{iceberg.HourTransform{}, 3, int32(480000), true},
		{iceberg.YearTransform{}, 3, int32(56), true},
		{iceberg.BucketTransform{NumBuckets: 4}, 1, int32(2), false},
		{iceberg.TruncateTransform{Width: 3}, 6, "use", false},
		{iceberg.VoidTransform{}, 2, nil, true},
	} {
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{c.src}, FieldID: 1000, Name: "p", Transform: c.tr})
		e, ok := partitionFilter(sc, spec, map[int]any{1000: c.v})
		if ok != c.want {
			t.Fatalf("%s(%v): ok=%v, want %v (%v)", c.tr, c.v, ok, c.want, e)
		}
		if ok && fmt.Sprint(e) == "" {
			t.Fatalf("%s: empty filter", c.tr)
		}
	}
}
