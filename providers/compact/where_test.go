package compact

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/testkit"
)

// whereNow is the clock of the where tests: the afternoon of testkit's
// fourth day (2026-11-04), so current_date is that day.
var whereNow = time.Date(2026, 11, 4, 15, 30, 0, 0, time.UTC)

// For each filter, the partitions whose files the plan's observation marks
// as candidates are exactly the partitions the compaction engine plans
// (compaction.PlanGroups under the same where), on a day-partitioned table
// and an unpartitioned one; excluded partitions keep their file counts.
func TestWhereObserveMatchesEngine(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	daily := testkit.Append(t, l.CreateTable(t, "w.daily", testkit.TableOptions{Partitioned: true}), 12, 10, 4)
	flat := testkit.Append(t, l.CreateTable(t, "w.flat", testkit.TableOptions{}), 3, 10, 1)
	sel, engineSel := whereSelections()
	cases := []struct {
		where string
		daily []string // partitions selected on the daily table
	}{
		{"", []string{"event_day=2026-11-01", "event_day=2026-11-02", "event_day=2026-11-03", "event_day=2026-11-04"}},
		{"event_ts >= '2026-11-03T00:00:00Z'", []string{"event_day=2026-11-03", "event_day=2026-11-04"}},
		{"event_ts < '2026-11-02T12:00:00Z'", []string{"event_day=2026-11-01", "event_day=2026-11-02"}},
		{"event_ts >= '2026-11-02T00:00:00Z' AND event_ts < '2026-11-03T00:00:00Z'", []string{"event_day=2026-11-02"}},
		{"NOT (event_ts >= '2026-11-02T00:00:00Z')", []string{"event_day=2026-11-01"}},
		{"event_ts < '2026-11-02T00:00:00Z' OR event_ts >= '2026-11-04T00:00:00Z'", []string{"event_day=2026-11-01", "event_day=2026-11-04"}},
		{"event_ts IS NULL", nil},
		{"kind = 'click'", []string{"event_day=2026-11-01", "event_day=2026-11-02", "event_day=2026-11-03", "event_day=2026-11-04"}},
		{"event_ts > '2030-01-01T00:00:00Z'", nil},
		{"FALSE", nil},
		// Relative to whereNow (2026-11-04T15:30Z).
		{"event_ts >= current_date - interval '2' day", []string{"event_day=2026-11-02", "event_day=2026-11-03", "event_day=2026-11-04"}},
		{"event_ts >= current_date", []string{"event_day=2026-11-04"}},
		{"event_ts < now() - interval '2 days'", []string{"event_day=2026-11-01", "event_day=2026-11-02"}},
		{"event_ts >= CURRENT_TIMESTAMP - INTERVAL 24 HOURS AND event_ts < current_date", []string{"event_day=2026-11-03"}},
		{"event_ts > current_timestamp + interval '1' week", nil},
	}
	for _, tc := range cases {
		t.Run(tc.where, func(t *testing.T) {
			for _, tbl := range []struct {
				name string
				want []string
			}{{"daily", tc.daily}, {"flat", nil}} {
				tb := daily
				if tbl.name == "flat" {
					tb = flat
				}
				s := sel
				s.Where = tc.where
				st, err := ObserveTable(ctx, tb, "lake.w."+tbl.name, s, whereNow)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range st.Partitions {
					if p.DataFiles != 3 || p.SmallFiles != 3 {
						t.Fatalf("%s %s: stats %+v, want 3 data files, 3 small, whatever the where", tbl.name, p.Partition, p)
					}
				}
				observed := candidatePartitions(st)
				requireEngineAgrees(t, tb, engineSel, tc.where, observed)
				want := tbl.want
				if tbl.name == "flat" && tc.where != "FALSE" {
					// An unpartitioned spec projects every predicate to
					// true: a partition filter excludes nothing there.
					want = []string{""}
				}
				if !slices.Equal(observed, want) {
					t.Fatalf("%s: observation selects %q, want %q", tbl.name, observed, want)
				}
			}
		})
	}
}

// A where that does not parse or bind fails the observation with the
// reason, and no state comes back.
func TestWhereErrors(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "w.daily", testkit.TableOptions{Partitioned: true}), 2, 10, 2)
	for where, want := range map[string]string{
		"no_such_column > 1":           "no_such_column",
		"event_ts >= 'yesterday'":      "yesterday",
		"event_ts >=":                  "expected a literal",
		"event_ts = 'a' AND":           "expected a column name",
		"(kind = 'a'":                  "expected ')'",
		"kind = 'unterminated":         "unterminated string",
		"current_date - interval '7'":  "expected a comparison",
		"event_ts >= current_date - 7": "expected INTERVAL",
		"kind >= current_date":         "TimestampLiteral to string",
	} {
		st, err := ObserveTable(ctx, tbl, "lake.w.daily", diff.CompactionSelection{Target: 1 << 20, Min: 1 << 19, Max: 2 << 20, MinInputFiles: 1, Where: where}, whereNow)
		if err == nil || st != nil {
			t.Fatalf("%q: want an error, got state %v", where, st)
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "compaction.where") {
			t.Fatalf("%q: error %q does not say %q", where, err, want)
		}
	}
}

func whereSelections() (diff.CompactionSelection, icecompaction.Config) {
	sel := diff.CompactionSelection{Target: 64 << 20, Min: 48 << 20, Max: 100 << 20, MinInputFiles: 1, DeleteFileThreshold: 5}
	return sel, icecompaction.Config{
		TargetFileSizeBytes: sel.Target, MinFileSizeBytes: sel.Min, MaxFileSizeBytes: sel.Max,
		MinInputFiles: 1, DeleteFileThreshold: 5, PackingLookback: icecompaction.DefaultPackingLookback,
	}
}

// candidatePartitions are the partitions with a compaction candidate, sorted.
func candidatePartitions(st *diff.TableState) []string {
	var out []string
	for _, p := range st.Partitions {
		if len(p.CandidateSizes) > 0 {
			out = append(out, p.Partition)
		}
	}
	slices.Sort(out)
	return out
}

// requireEngineAgrees plans tbl with the compaction engine under where, in
// one pass and partition by partition, and fails unless the partitions it
// plans are observed.
func requireEngineAgrees(t *testing.T, tbl *table.Table, sel icecompaction.Config, where string, observed []string) {
	t.Helper()
	cfg := compaction.PlanConfig{Selection: sel, PerPartition: true}
	if where != "" {
		var err error
		if cfg.Where, err = compaction.ParseWhere(where, whereNow); err != nil {
			t.Fatal(err)
		}
	}
	for _, limit := range []int{0, -1} { // single pass, per partition
		cfg.SinglePassMaxFiles = limit
		groups, err := compaction.PlanGroups(context.Background(), tbl, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var planned []string
		for _, g := range groups {
			planned = append(planned, g.Partition)
		}
		slices.Sort(planned)
		if !slices.Equal(planned, observed) {
			t.Fatalf("where %q (limit %d): engine plans %v, observation selects %v", where, limit, planned, observed)
		}
	}
	if cfg.Where == nil {
		return
	}
	// iceberg-go's own scan planning (its unexported inclusive projection,
	// then column metrics) may keep fewer files, never a partition we drop.
	tasks, err := tbl.Scan(table.WithRowFilter(cfg.Where)).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sc := tbl.Schema()
	for _, task := range tasks {
		spec := tbl.Metadata().PartitionSpecByID(int(task.File.SpecID()))
		part := newPartitionRenderer(spec, sc).render(task.File.Partition())
		if _, found := slices.BinarySearch(observed, part); !found {
			t.Fatalf("where %q: iceberg-go's scan keeps %s of partition %q, which the observation drops", where, task.File.FilePath(), part)
		}
	}
}

// The same agreement after partition-spec evolution (day, then day +
// identity(kind) + bucket(4, user_id)): each spec gets its own projection,
// bucket fields included, which the engine plans in its fallback pass.
func TestWhereObserveMatchesEngineAcrossSpecs(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "w.evolving", testkit.TableOptions{Partitioned: true}), 4, 8, 2)
	txn := tbl.NewTransaction()
	if err := txn.UpdateSpec(true).AddField("kind", iceberg.IdentityTransform{}, "kind").
		AddField("user_id", iceberg.BucketTransform{NumBuckets: 4}, "user_bucket").Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 4, 16, 2)
	sel, engineSel := whereSelections()
	all, err := ObserveTable(ctx, tbl, "lake.w.evolving", sel, whereNow)
	if err != nil {
		t.Fatal(err)
	}
	everything := candidatePartitions(all)
	if len(everything) < 10 {
		t.Fatalf("setup: want files in many partitions of both specs, got %v", everything)
	}
	for _, where := range []string{
		"kind = 'click'",
		"kind IN ('view', 'signup') AND event_ts < '2026-11-02T00:00:00Z'",
		"NOT (kind = 'view')",
		"user_id = 7",
		"user_id = 7 OR kind = 'purchase'",
		"kind IS NULL",
		"event_ts >= '2026-11-02T00:00:00Z'",
	} {
		t.Run(where, func(t *testing.T) {
			s := sel
			s.Where = where
			st, err := ObserveTable(ctx, tbl, "lake.w.evolving", s, whereNow)
			if err != nil {
				t.Fatal(err)
			}
			observed := candidatePartitions(st)
			if len(observed) == 0 && where != "kind IS NULL" {
				t.Fatalf("nothing selected; the filter should keep some partitions")
			}
			if len(observed) == len(everything) && !strings.HasPrefix(where, "NOT") {
				t.Fatalf("everything selected (%d partitions); the filter should drop some", len(observed))
			}
			requireEngineAgrees(t, tbl, engineSel, where, observed)
		})
	}
}

// The where is decided from the manifests alone: with every data file gone
// from storage, the observation under a where is what it was.
func TestWhereReadsNoDataFile(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "w.daily", testkit.TableOptions{Partitioned: true}), 8, 10, 4)
	sel, _ := whereSelections()
	sel.Where = "event_ts >= '2026-11-03T00:00:00Z'"
	before, err := ObserveTable(ctx, tbl, "lake.w.daily", sel, whereNow)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	err = filepath.WalkDir(strings.TrimPrefix(tbl.Location(), "file://"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			removed++
			return os.Remove(p)
		}
		return err
	})
	if err != nil || removed != 8 {
		t.Fatalf("removed %d data files (want 8): %v", removed, err)
	}
	after, err := ObserveTable(ctx, tbl, "lake.w.daily", sel, whereNow)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := candidatePartitions(after), candidatePartitions(before); !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("candidates %v after removing the data files, %v before (want 2 partitions)", got, want)
	}
}
