package compact

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// A saved plan whose groups no longer match the table: the executor
// rewrites exactly the files of the groups that still match, skips each
// other group naming it and why (a file gone, a partition that is not the
// plan's, files of another size), and leaves the files that arrived after
// the plan as they are, in a partition it compacts too.
func TestCompactRunsThePlannedGroups(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := l.Cat.CreateTable(ctx, l.Ident, testkit.OrdersSchema, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	id := int64(0)
	for _, region := range []string{"eu", "eu", "us", "us", "ap", "ap", "sa", "sa", "af", "af"} {
		tbl = testkit.AppendRows(t, tbl, []int64{id, id + 1}, []string{region, region})
		id += 2
	}
	act := plannedCompaction(t, tbl, testkit.SmallFiles, "binpack")
	groups := map[string]diff.CompactGroup{}
	for _, g := range act.Groups {
		groups[g.Partition] = g
	}
	if len(act.Groups) != 5 || len(groups["region=eu"].Files) != 2 {
		t.Fatalf("planned %+v", act.Groups)
	}

	// Since the plan: another compaction replaced eu's files, a writer
	// added a file to us, and the saved plan is edited so that sa's group
	// names another partition and af's another size.
	eu := *act
	eu.Groups = []diff.CompactGroup{groups["region=eu"]}
	_, res, err := Compact(ctx, tbl, CompactSpec{Action: &eu, Catalog: l.Cat})
	if err != nil || !res.Committed {
		t.Fatalf("compact eu: %+v %v", res, err)
	}
	tbl = testkit.AppendRows(t, l.Load(), []int64{100, 101}, []string{"us", "us"})
	arrived := slices.DeleteFunc(testkit.DataFiles(t, tbl), func(p string) bool {
		return !strings.Contains(p, "region=us") || slices.Contains(groups["region=us"].Files, p)
	})
	if len(arrived) != 1 {
		t.Fatalf("the file that arrived: %v", arrived)
	}
	for i, g := range act.Groups {
		switch g.Partition {
		case "region=sa":
			act.Groups[i].Partition = "region=xx"
		case "region=af":
			act.Groups[i].InputBytes++
		}
	}
	before := testkit.DataFiles(t, tbl)

	next, res, err := Compact(ctx, tbl, CompactSpec{Action: act, Catalog: l.Cat})
	if err != nil || !res.Committed {
		t.Fatalf("compact: %+v %v", res, err)
	}
	skipped := strings.Join(res.Skipped, "\n")
	for _, want := range []string{
		`(spec 0, region=eu, 2 files) skipped: 2 of its 2 files are no longer in the table (first: `,
		`(spec 0, region=xx, 2 files) skipped: the partition changed: `,
		`(spec 0, region=af, 2 files) skipped: its files hold `,
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped:\n%s\nwants %q", skipped, want)
		}
	}
	if len(res.Skipped) != 3 || !strings.Contains(res.Note, "3 of 5 planned groups skipped") {
		t.Errorf("result %+v", res)
	}
	// Exactly us's and ap's planned files are gone; every other file,
	// the one that arrived included, is still live.
	after := testkit.DataFiles(t, next)
	var gone []string
	for _, p := range before {
		if !slices.Contains(after, p) {
			gone = append(gone, p)
		}
	}
	want := append(slices.Clone(groups["region=us"].Files), groups["region=ap"].Files...)
	slices.Sort(gone)
	slices.Sort(want)
	if !slices.Equal(gone, want) || !slices.Contains(after, arrived[0]) {
		t.Fatalf("rewritten %v, want %v; %s still live: %v", gone, want, arrived[0], slices.Contains(after, arrived[0]))
	}
	if got := testkit.OrderIDs(t, next); len(got) != int(id)+2 {
		t.Fatalf("rows %v", got)
	}
	counts := map[string]int{}
	for _, p := range after {
		counts[strings.Split(strings.SplitAfter(p, "region=")[1], "/")[0]]++
	}
	if w := map[string]int{"eu": 1, "us": 2, "ap": 1, "sa": 2, "af": 2}; !maps.Equal(counts, w) {
		t.Fatalf("files per region %v, want %v", counts, w)
	}
}

// A saved plan that names a file in two groups is refused before anything
// is rewritten.
func TestCompactRefusesAFileInTwoGroups(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, testkit.AppendIDs(t, l.Create(nil), 0, 2), 2, 2)
	act := plannedCompaction(t, tbl, testkit.SmallFiles, "binpack")
	if act == nil || len(act.Groups) != 1 {
		t.Fatalf("planned %+v", act)
	}
	twice := *act
	twice.Groups = []diff.CompactGroup{act.Groups[0], act.Groups[0]}
	_, res, err := Compact(ctx, tbl, CompactSpec{Action: &twice, Catalog: l.Cat})
	if err == nil || !strings.Contains(err.Error(), "is in two approved groups") || res.Committed {
		t.Fatalf("compact: %+v %v", res, err)
	}
	if l.Load().MetadataLocation() != tbl.MetadataLocation() {
		t.Fatal("the table changed")
	}
}
