package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// agedRows are rows from -> to whose ts run from 2024-01-01 ten hours
// apart (id 400 is mid-June 2024).
func agedRows(from, to int) string {
	return strings.Replace(sparkRows(from, to), "timestamp_seconds(1706652000 + id * 2221)", "timestamp_seconds(1704067200 + id * 36000)", 1)
}

// ageingPolicy ages days to months after 90 days.
const ageingPolicy = `
  partition_ageing {
    after = "90d"
    from  = "day"
    to    = "month"
  }`

// TestForeignPartitionAgeing (issue 29, item 6): a Spark-written table
// partitioned by days(ts) and bucket(2, id), rows from January to mid-June
// 2024 and merge-on-read position deletes, planned at 2024-06-20 with partition_ageing after 90d: January and
// February (the months that ended by 2024-03-22) are aged into a new spec
// 1, days(ts) replaced by months(ts) and the bucket kept, not the default
// spec; March on stays in days. Apply commits one replace snapshot; Spark,
// iceberg-go and DuckDB read the same values after as before; every
// manifest holds files of its own spec; the next plan is empty. A table
// partitioned by two day fields is refused in the plan, and nothing is
// committed to it.
func TestForeignPartitionAgeing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	l := newForeignLake(ctx, t)
	duck := testenv.DuckDBReader(t)
	aged := foreignTable{name: "aged_days", rows: 400}
	n, amb := l.name(aged.name), l.name("two_days")
	l.sql(ctx, t,
		"CREATE TABLE "+n+" "+sparkColumns+" USING iceberg PARTITIONED BY (days(ts), bucket(2, id)) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
		"INSERT INTO "+n+" "+agedRows(0, 150),
		"INSERT INTO "+n+" "+agedRows(150, 300),
		"INSERT INTO "+n+" "+agedRows(0, 400)+" WHERE id >= 300 OR id % 5 = 0",
		"DELETE FROM "+n+" WHERE id % 5 = 0 AND id < 300 AND amount IS NULL",
		"CREATE TABLE "+amb+" (id BIGINT, ts TIMESTAMP, ts2 TIMESTAMP) USING iceberg PARTITIONED BY (days(ts), days(ts2)) TBLPROPERTIES ('format-version'='2')",
		"INSERT INTO "+amb+" SELECT id, timestamp_seconds(1704067200 + id * 36000), timestamp_seconds(1704067200 + id * 7200) FROM range(0, 50)",
	)
	// The last insert repeats some ids (every fifth below 300): 60 more
	// rows, less the 5 of them the delete takes (amount is null every
	// 13th id: ids 0, 65, 130, 195, 260 of the repeats and their originals).
	aged.rows = 400 + 60 - 10
	before := l.reads(ctx, t, &duck, []foreignTable{aged})
	tbl := l.load(ctx, t, aged.name)
	snapBefore := tbl.CurrentSnapshot().SnapshotID
	deletesBefore := len(liveDeleteFiles(ctx, t, tbl))
	ambSnap := l.load(ctx, t, "two_days").CurrentSnapshot().SnapshotID

	now := time.Date(2024, 6, 20, 12, 0, 0, 0, time.UTC)
	nowFn := func() time.Time { return now }

	refused := findTable(t, planOnly(ctx, t, l.configFor(t, "two_days", ageingPolicy), nowFn), amb)
	if len(refused.Actions) > 0 || len(refused.Refusals) != 1 || refused.Refusals[0].Action != string(diff.AgePartitions) ||
		!strings.Contains(refused.Refusals[0].Reason, "2 day fields (ts_day, ts2_day): which one dates a partition is ambiguous") {
		t.Errorf("two day fields: actions %v refusals %+v, want one age_partitions refusal", actionTypes(refused), refused.Refusals)
	}

	cfg := l.configFor(t, aged.name, ageingPolicy)
	p, res := planApply(ctx, t, cfg, nowFn, nil)
	requireApplied(t, res)
	tp := findTable(t, p, n)
	a := actionOf(tp, diff.AgePartitions)
	if a == nil || len(tp.Actions) != 1 || len(tp.Refusals) > 0 {
		t.Fatalf("want age_partitions alone: actions %v refusals %+v", actionTypes(tp), tp.Refusals)
	}
	g := a.PartitionAgeing
	t.Logf("%s: %d files, %d groups: %+v", a.Reason, g.InputFiles, len(g.Groups), g.Groups[0])
	// The deletes of the aged days (ids 0, 65 and 130) are applied and
	// retired with their files; those of March and April (195, 260) stay.
	if deletes := len(liveDeleteFiles(ctx, t, l.load(ctx, t, aged.name))); deletes >= deletesBefore || deletes == 0 {
		t.Errorf("%d delete files after apply, %d before: want fewer, and some", deletes, deletesBefore)
	}
	if !g.AddsSpec || g.TargetSpecID != 1 || g.Column != "ts" || g.Field != "ts_day" || len(g.Groups) != 4 {
		t.Errorf("planned %+v, want spec 1 added, 2 months × 2 buckets", g)
	}
	for _, gr := range g.Groups {
		if !strings.HasPrefix(gr.Partition, "ts_month=2024-01/") && !strings.HasPrefix(gr.Partition, "ts_month=2024-02/") {
			t.Errorf("group %s is not January or February", gr.Partition)
		}
	}

	tbl = l.load(ctx, t, aged.name)
	md := tbl.Metadata()
	if md.DefaultPartitionSpec() != 0 || len(md.PartitionSpecs()) != 2 {
		t.Errorf("default spec %d of %d specs, want 0 of 2", md.DefaultPartitionSpec(), len(md.PartitionSpecs()))
	}
	if s := tbl.CurrentSnapshot(); s.Summary.Operation != table.OpReplace || *s.ParentSnapshotID != snapBefore {
		t.Errorf("apply committed %+v, want one replace snapshot on %d", s, snapBefore)
	}
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	fs, mans := testkit.CurrentManifests(t, tbl)
	months := map[string]bool{}
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			if df.ContentType() != iceberg.EntryContentData {
				continue
			}
			spec := md.PartitionSpecByID(int(df.SpecID()))
			for _, f := range spec.Fields() {
				v, ok := df.Partition()[f.FieldID].(int32)
				var start time.Time
				switch f.Transform.(type) {
				case iceberg.MonthTransform:
					start = time.Unix(0, 0).UTC().AddDate(0, int(v), 0)
					months[start.Format("2006-01")] = true
					if !ok || !start.Before(march) {
						t.Errorf("%s: month %v in spec %d", df.FilePath(), df.Partition()[f.FieldID], spec.ID())
					}
				case iceberg.DayTransform:
					d, _ := df.Partition()[f.FieldID].(iceberg.Date)
					if start = time.Unix(0, 0).UTC().AddDate(0, 0, int(d)); start.Before(march) {
						t.Errorf("%s: day %s still in spec %d", df.FilePath(), start.Format(time.DateOnly), spec.ID())
					}
				}
			}
		}
	}
	if fmt.Sprint(months) != "map[2024-01:true 2024-02:true]" {
		t.Errorf("months in spec 1: %v", months)
	}
	testkit.RequireManifestsAgree(t, tbl)
	requireReferencedPresent(ctx, t, aged.name, tbl)
	requireSameReads(t, before, l.reads(ctx, t, &duck, []foreignTable{aged}))
	requireConverged(t, planOnly(ctx, t, cfg, nowFn))
	if got := l.load(ctx, t, "two_days"); got.CurrentSnapshot().SnapshotID != ambSnap || len(got.Metadata().PartitionSpecs()) != 1 {
		t.Errorf("the refused table got snapshot %d, %d specs", got.CurrentSnapshot().SnapshotID, len(got.Metadata().PartitionSpecs()))
	}

	// default = true, in October: the same commit ages March to June into
	// spec 1 and makes it the default; Spark then writes months, and
	// every reader still reads the same values.
	october := time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)
	octFn := func() time.Time { return october }
	ageingDefault := strings.Replace(ageingPolicy, `to    = "month"`, `to    = "month"
    default = true`, 1)
	cfgDefault := l.configFor(t, aged.name, ageingDefault)
	// With compaction beside it: compact runs after age_partitions, on
	// the table as ageing left it.
	cfgCompact := l.configFor(t, aged.name, ageingDefault+`
  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }`)
	p, res = planApply(ctx, t, cfgCompact, octFn, nil)
	requireApplied(t, res)
	if tp := findTable(t, p, n); actionOf(tp, diff.Compact) == nil {
		t.Errorf("October: no compact beside age_partitions: %v", actionTypes(tp))
	}
	for _, tr := range res.Tables {
		for _, ar := range tr.Actions {
			t.Logf("October apply: %s %s committed %v %s", ar.Type, ar.Status, ar.Committed, ar.Reason)
		}
	}
	if a := actionOf(findTable(t, p, n), diff.AgePartitions); a == nil || !a.PartitionAgeing.SetsDefault || a.PartitionAgeing.AddsSpec || len(a.PartitionAgeing.Groups) != 8 {
		t.Fatalf("default = true in October: %+v", a)
	}
	tbl = l.load(ctx, t, aged.name)
	if tbl.Metadata().DefaultPartitionSpec() != 1 {
		t.Errorf("default spec %d, want 1", tbl.Metadata().DefaultPartitionSpec())
	}
	for _, f := range testkit.DataFiles(t, tbl) {
		if strings.Contains(f, "/ts_day=") {
			t.Errorf("%s is still a day file", f)
		}
	}
	testkit.RequireManifestsAgree(t, tbl)
	requireSameReads(t, before, l.reads(ctx, t, &duck, []foreignTable{aged}))
	requireConverged(t, planOnly(ctx, t, cfgCompact, octFn))
	l.sql(ctx, t, "INSERT INTO "+n+" "+agedRows(400, 410))
	tbl = l.load(ctx, t, aged.name)
	for _, f := range testkit.DataFiles(t, tbl) {
		if strings.Contains(f, "/ts_day=") {
			t.Errorf("Spark wrote %s under days, not the default month spec", f)
		}
	}
	testkit.RequireManifestsAgree(t, tbl)
	requireConverged(t, planOnly(ctx, t, cfgDefault, octFn))
}
