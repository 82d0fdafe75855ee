package compaction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

var dayToMonth = AgeingRule{From: iceberg.DayTransform{}, To: iceberg.MonthTransform{}, After: 90 * 24 * time.Hour}

// agedRows are n rows from id first whose ts run from 2024-01-01 over
// span (no null ts: iceberg-go's partitioned append panics on one).
func agedRows(first int64, n int, span time.Duration) arrow.RecordBatch {
	rec := genRows(uint64(first+1), first, n, regions)
	defer rec.Release()
	b := array.NewTimestampBuilder(memory.DefaultAllocator, rec.Column(2).DataType().(*arrow.TimestampType))
	defer b.Release()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		b.Append(arrow.Timestamp(start.Add(span * time.Duration(i) / time.Duration(n)).UnixMicro()))
	}
	ts := b.NewArray()
	defer ts.Release()
	cols := slices.Clone(rec.Columns()) // not rec's own slice: its Release must see its columns
	cols[2] = ts
	return array.NewRecordBatch(rec.Schema(), cols, int64(n))
}

// dayTable is partitioned by day(ts) and region, three appends of rows
// from January to May 2024.
func dayTable(t *testing.T, env *testEnv, name string) *table.Table {
	t.Helper()
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := env.cat.CreateTable(context.Background(), table.Identifier{"ns", name}, testSchema(),
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := agedRows(int64(i)*400, 400, 151*24*time.Hour)
		tbl = appendBatch(t, tbl, rec)
		rec.Release()
	}
	return tbl
}

// TestAgeingDayToMonth: with now 2024-06-20 and after 90d (cutoff
// 2024-03-22), January and February are aged, whole, and March is not
// (it ends after the cutoff). One replace snapshot adds spec 1 (not the
// default) and moves their files to one month partition per region; rows
// are unchanged; every manifest holds files of its own spec; March to May
// stay in spec 0; planning again finds nothing. The commit check refuses
// the same snapshot told another target partition, or told it is a plain
// rewrite (outputs keep their inputs' partition).
func TestAgeingDayToMonth(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t)
	tbl := dayTable(t, env, "aged")
	before := rowStrings(t, tbl)
	beforeSnap := tbl.CurrentSnapshot().SnapshotID
	now := time.Date(2024, 6, 20, 12, 0, 0, 0, time.UTC)

	a, err := PlanAgeing(ctx, tbl, dayToMonth, now)
	if err != nil || a.Refusal != "" {
		t.Fatalf("plan: %v %q", err, a.Refusal)
	}
	if !a.NewSpec || a.Spec.ID() != 1 || len(a.Groups) != 2*len(regions) {
		t.Fatalf("plan: new spec %v id %d, %d groups, want a new spec 1 and %d groups", a.NewSpec, a.Spec.ID(), len(a.Groups), 2*len(regions))
	}
	for _, g := range a.Groups {
		if !strings.HasPrefix(g.Name, "ts_month=2024-01/") && !strings.HasPrefix(g.Name, "ts_month=2024-02/") {
			t.Errorf("group %s is not January or February", g.Name)
		}
		if len(g.Sources) < 20 {
			t.Errorf("group %s takes %d day partitions: %v", g.Name, len(g.Sources), g.Sources)
		}
	}

	// A commit that fails leaves the table as it was: no spec either, and
	// no data file it wrote (the metadata files iceberg-go wrote for the
	// unsent snapshot are the executor's to remove: kind.FailedCommit).
	dataFiles := func() []string {
		return slices.DeleteFunc(listFiles(t, env.warehouse), func(p string) bool { return !strings.Contains(p, "/data/") })
	}
	filesBefore := dataFiles()
	failing := Options{Catalog: env.cat, tamper: func(context.Context, icebergio.IO, table.Metadata, []table.Update) ([]table.Update, error) {
		return nil, errors.New("catalog down")
	}}
	if _, _, err := RunAgeing(ctx, tbl, dayToMonth, now, failing); err == nil {
		t.Fatal("a failed commit reported success")
	}
	if got := env.load(t, "aged"); len(got.Metadata().PartitionSpecs()) != 1 || got.CurrentSnapshot().SnapshotID != beforeSnap {
		t.Fatalf("a failed ageing left %d specs, snapshot %d", len(got.Metadata().PartitionSpecs()), got.CurrentSnapshot().SnapshotID)
	}
	if after := dataFiles(); !slices.Equal(after, filesBefore) {
		t.Fatalf("a failed ageing left data files: %d before, %d after", len(filesBefore), len(after))
	}

	a, res, err := RunAgeing(ctx, tbl, dayToMonth, now, Options{Catalog: env.cat})
	if err != nil {
		t.Fatal(err)
	}
	tbl = env.load(t, "aged")
	requireSameRows(t, before, rowStrings(t, tbl))
	testkit.RequireManifestsAgree(t, tbl)
	// The DELETED entries too: the inputs leave through manifests of
	// their own spec, the outputs arrive in manifests of theirs.
	fsys, mans := testkit.CurrentManifests(t, tbl)
	specs := map[int32]int{}
	for _, m := range mans {
		for e, err := range m.Entries(fsys, false) {
			if err != nil {
				t.Fatal(err)
			}
			if df := e.DataFile(); df.SpecID() != m.PartitionSpecID() {
				t.Errorf("manifest %s of spec %d holds %s (%v) of spec %d", m.FilePath(), m.PartitionSpecID(), df.FilePath(), e.Status(), df.SpecID())
			}
			specs[m.PartitionSpecID()]++
		}
	}
	if len(specs) != 2 {
		t.Errorf("entries by manifest spec %v, want both specs", specs)
	}
	md := tbl.Metadata()
	if md.DefaultPartitionSpec() != 0 || len(md.PartitionSpecs()) != 2 {
		t.Errorf("default spec %d of %d specs, want 0 of 2", md.DefaultPartitionSpec(), len(md.PartitionSpecs()))
	}
	snap := tbl.CurrentSnapshot()
	if len(res.Snapshots) != 1 || snap.SnapshotID != res.Snapshots[0] || snap.Summary.Operation != table.OpReplace || *snap.ParentSnapshotID != beforeSnap {
		t.Errorf("committed %v, current %+v, want one replace on %d", res.Snapshots, snap, beforeSnap)
	}
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	monthFiles := 0
	for _, task := range liveTasks(t, tbl) {
		df := task.File
		v, ok := reach.TimeOrdinal(df.Partition()[1000])
		if df.SpecID() == 1 {
			monthFiles++
			m, _ := reach.TimeOrdinal(df.Partition()[1002])
			if start, _ := reach.WindowStart(iceberg.MonthTransform{}, m); !start.Before(march) {
				t.Errorf("%s: month %d in spec 1", df.FilePath(), m)
			}
			if !strings.Contains(df.FilePath(), "/ts_month=2024-0") {
				t.Errorf("%s: not under its month's directory", df.FilePath())
			}
			continue
		}
		if ok {
			if start, _ := reach.WindowStart(iceberg.DayTransform{}, v); start.Before(march) {
				t.Errorf("%s: day %s still in spec 0", df.FilePath(), start)
			}
		}
	}
	if monthFiles != 2*len(regions) {
		t.Errorf("%d files in spec 1, want one a month and region: %d", monthFiles, 2*len(regions))
	}
	again, err := PlanAgeing(ctx, tbl, dayToMonth, now)
	if err != nil || again.NewSpec || again.Spec.ID() != 1 || len(again.Groups) != 0 {
		t.Fatalf("plan again: %v, new spec %v id %d, %d groups", err, again.NewSpec, again.Spec.ID(), len(again.Groups))
	}

	// The commit check, told what the commit did, passes; told another
	// target, or no target, it refuses.
	fs := mustFS(t, tbl)
	change := ageingChange(t, tbl, a)
	if err := reach.CheckSnapshots(ctx, fs, md, beforeSnap, snap.SnapshotID, change); err != nil {
		t.Fatalf("the check refuses the ageing commit: %v", err)
	}
	wrong := ageingChange(t, tbl, a)
	g := &wrong.Groups[0]
	p := map[int]any{}
	for k, v := range g.Target.Partition {
		p[k] = v
	}
	p[1002] = p[1002].(int32) + 1
	g.Target = &reach.Target{SpecID: 1, Partition: p}
	err = reach.CheckSnapshots(ctx, fs, md, beforeSnap, snap.SnapshotID, wrong)
	var ce *reach.CheckError
	if !errors.As(err, &ce) || !strings.Contains(strings.Join(ce.Differences, "\n"), "its target in spec 1") || !strings.Contains(err.Error(), "coarsens to") {
		t.Errorf("another target partition: %v", err)
	}
	plain := ageingChange(t, tbl, a)
	plain.Groups[0].Target = nil
	err = reach.CheckSnapshots(ctx, fs, md, beforeSnap, snap.SnapshotID, plain)
	if !errors.Is(err, reach.ErrCommitCheck) || !strings.Contains(err.Error(), "its inputs in spec 0") {
		t.Errorf("no target: %v", err)
	}
}

// ageingChange is the change the ageing commit meant: each group's inputs
// and the outputs the new snapshot lists in its target partition.
func ageingChange(t *testing.T, tbl *table.Table, a *Ageing) reach.Change {
	t.Helper()
	var ch reach.Change
	tasks := liveTasks(t, tbl)
	for _, g := range a.Groups {
		rg := reach.RewriteGroup{Target: &reach.Target{SpecID: g.Target.SpecID, Partition: g.Target.Partition}}
		for _, task := range g.Tasks {
			rg.Inputs = append(rg.Inputs, task.File.FilePath())
		}
		for _, task := range tasks {
			if int(task.File.SpecID()) == g.Target.SpecID && partKey(1, task.File.Partition()) == partKey(1, g.Target.Partition) {
				rg.Outputs = append(rg.Outputs, task.File)
				rg.RowsRead += task.File.Count()
			}
		}
		ch.Groups = append(ch.Groups, rg)
	}
	return ch
}

// TestAgeingSpecRefusals: the coarser spec must be unambiguous; a bucket
// or identity field is kept (no re-evaluation), a second day field, no
// day field, another time field of the column or a v1 table is a refusal.
func TestAgeingSpecRefusals(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "ts2", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "ts_month", Type: iceberg.PrimitiveTypes.Int32})
	day := func(src, id int) iceberg.PartitionField {
		return iceberg.PartitionField{SourceIDs: []int{src}, FieldID: id, Name: "d" + string(rune('0'+id-1000)), Transform: iceberg.DayTransform{}}
	}
	for _, c := range []struct {
		name    string
		fields  []iceberg.PartitionField
		version string
		refusal string
	}{
		{"bucket kept", []iceberg.PartitionField{day(3, 1000), {SourceIDs: []int{3}, FieldID: 1001, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}}, {SourceIDs: []int{1}, FieldID: 1002, Name: "t", Transform: iceberg.TruncateTransform{Width: 10}}}, "2", ""},
		{"two day fields", []iceberg.PartitionField{day(2, 1000), day(3, 1001)}, "2", "has 2 day fields (d0, d1): which one dates a partition is ambiguous"},
		{"no day field", []iceberg.PartitionField{{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}}}, "2", "has no day field"},
		{"v1", []iceberg.PartitionField{day(3, 1000)}, "1", "format version 1"},
		{"name is a column", []iceberg.PartitionField{day(2, 1000)}, "2", "the coarser field's name ts_month is a column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := iceberg.NewPartitionSpec(c.fields...)
			md, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "file:///tmp/x", iceberg.Properties{"format-version": c.version})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := ageingSpec(md, dayToMonth)
			if c.refusal == "" {
				if a.Refusal != "" || !a.NewSpec || a.Spec.NumFields() != 3 {
					t.Fatalf("refused %q, spec %v", a.Refusal, a.Spec)
				}
				return
			}
			if !strings.Contains(a.Refusal, c.refusal) {
				t.Errorf("refusal %q, want %q", a.Refusal, c.refusal)
			}
		})
	}
}

// TestAgeingDefaultSpec: with Default the commit also makes the coarser
// spec the default; then the default spec has no day field, and the days
// still in spec 0 are aged into it as they get old, each run converging.
// Before anything is old enough, the commit only adds the spec and makes
// it the default (no snapshot).
func TestAgeingDefaultSpec(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t)
	rule := dayToMonth
	rule.Default = true

	early := dayTable(t, env, "early")
	snap := early.CurrentSnapshot().SnapshotID
	a, _, err := RunAgeing(ctx, early, rule, time.Date(2024, 2, 15, 0, 0, 0, 0, time.UTC), Options{Catalog: env.cat})
	if err != nil || len(a.Groups) != 0 || !a.SetsDefault || !a.NewSpec {
		t.Fatalf("nothing old: %v, %d groups, sets default %v, new spec %v", err, len(a.Groups), a.SetsDefault, a.NewSpec)
	}
	early = env.load(t, "early")
	if early.Metadata().DefaultPartitionSpec() != 1 || early.CurrentSnapshot().SnapshotID != snap {
		t.Errorf("default spec %d, snapshot %d (was %d): want spec 1 the default and no snapshot", early.Metadata().DefaultPartitionSpec(), early.CurrentSnapshot().SnapshotID, snap)
	}

	tbl := dayTable(t, env, "aged")
	before := rowStrings(t, tbl)
	june := time.Date(2024, 6, 20, 12, 0, 0, 0, time.UTC)
	if _, _, err := RunAgeing(ctx, tbl, rule, june, Options{Catalog: env.cat}); err != nil {
		t.Fatal(err)
	}
	tbl = env.load(t, "aged")
	if tbl.Metadata().DefaultPartitionSpec() != 1 {
		t.Fatalf("default spec %d, want 1", tbl.Metadata().DefaultPartitionSpec())
	}
	again, err := PlanAgeing(ctx, tbl, rule, june)
	if err != nil || again.Refusal != "" || again.SourceSpecID != 0 || again.Spec.ID() != 1 || again.NewSpec || again.SetsDefault || len(again.Groups) != 0 {
		t.Fatalf("plan again: %v %+v", err, again)
	}
	// In October, March to June are old too: aged into the default spec.
	october := time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)
	a, _, err = RunAgeing(ctx, tbl, rule, october, Options{Catalog: env.cat})
	if err != nil || len(a.Groups) != 3*len(regions) || a.SetsDefault {
		t.Fatalf("october: %v, %d groups, sets default %v", err, len(a.Groups), a.SetsDefault)
	}
	tbl = env.load(t, "aged")
	requireSameRows(t, before, rowStrings(t, tbl))
	testkit.RequireManifestsAgree(t, tbl)
	for _, task := range liveTasks(t, tbl) {
		if task.File.SpecID() != 1 {
			t.Errorf("%s still in spec %d", task.File.FilePath(), task.File.SpecID())
		}
	}
	if last, err := PlanAgeing(ctx, tbl, rule, october); err != nil || len(last.Groups) != 0 || last.SetsDefault {
		t.Errorf("plan after october: %v %+v", err, last)
	}
}

// TestAgeingRefusesLineageGaps: a table upgraded to v3 whose files have
// no first_row_id yet is a refusal, not a run that fails: leaving those
// files out would split their months between the specs.
func TestAgeingRefusesLineageGaps(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t)
	tbl := dayTable(t, env, "upgraded")
	txn := tbl.NewTransaction()
	if err := txn.UpgradeFormatVersion(3); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := PlanAgeing(ctx, tbl, dayToMonth, time.Date(2024, 6, 20, 0, 0, 0, 0, time.UTC))
	if err != nil || len(a.Groups) != 0 || !strings.Contains(a.Refusal, "has no first_row_id") {
		t.Fatalf("plan: %v, %d groups, refusal %q", err, len(a.Groups), a.Refusal)
	}
}
