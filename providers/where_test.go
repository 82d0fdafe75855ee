package providers

import (
	"context"
	"slices"
	"strings"
	"testing"

	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/compaction"
	"github.com/iceops/iceops/providers/testkit"
)

// For each filter, the partitions whose files the plan's observation marks
// as candidates are exactly the partitions the compaction engine plans
// (compaction.PlanGroups under the same where), on a day-partitioned table
// and an unpartitioned one; excluded partitions keep their file counts.
func TestWhereObserveMatchesEngine(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	daily := testkit.Append(t, l.CreateTable(t, "w.daily", testkit.TableOptions{Partitioned: true}), 12, 10, 4)
	flat := testkit.Append(t, l.CreateTable(t, "w.flat", testkit.TableOptions{}), 3, 10, 1)
	sel := diff.CompactionSelection{Target: 64 << 20, Min: 48 << 20, Max: 100 << 20, MinInputFiles: 1, DeleteFileThreshold: 5}
	engineSel := icecompaction.Config{
		TargetFileSizeBytes: sel.Target, MinFileSizeBytes: sel.Min, MaxFileSizeBytes: sel.Max,
		MinInputFiles: 1, DeleteFileThreshold: 5, PackingLookback: icecompaction.DefaultPackingLookback,
	}
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
				st, err := ObserveTable(ctx, tb, "lake.w."+tbl.name, s)
				if err != nil {
					t.Fatal(err)
				}
				var observed []string
				for _, p := range st.Partitions {
					if p.DataFiles != 3 || p.SmallFiles != 3 {
						t.Fatalf("%s %s: stats %+v, want 3 data files, 3 small, whatever the where", tbl.name, p.Partition, p)
					}
					if len(p.CandidateSizes) > 0 {
						observed = append(observed, p.Partition)
					}
				}
				cfg := compaction.PlanConfig{Selection: engineSel, PerPartition: true}
				for _, limit := range []int{0, -1} { // single pass, per partition
					cfg.SinglePassMaxFiles = limit
					if tc.where != "" {
						if cfg.Where, err = compaction.ParseWhere(tc.where); err != nil {
							t.Fatal(err)
						}
					}
					groups, err := compaction.PlanGroups(ctx, tb, cfg)
					if err != nil {
						t.Fatal(err)
					}
					var planned []string
					for _, g := range groups {
						planned = append(planned, g.Partition)
					}
					slices.Sort(planned)
					slices.Sort(observed)
					if !slices.Equal(planned, observed) {
						t.Fatalf("%s (limit %d): engine plans %v, observation selects %v", tbl.name, limit, planned, observed)
					}
				}
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
		"no_such_column > 1":          "no_such_column",
		"event_ts >= 'yesterday'":     "yesterday",
		"event_ts >=":                 "expected a literal",
		"event_ts = 'a' AND":          "expected a column name",
		"(kind = 'a'":                 "expected ')'",
		"kind = 'unterminated":        "unterminated string",
		"current_date - interval '7'": "expected a comparison",
	} {
		st, err := ObserveTable(ctx, tbl, "lake.w.daily", diff.CompactionSelection{Target: 1 << 20, Min: 1 << 19, Max: 2 << 20, MinInputFiles: 1, Where: where})
		if err == nil || st != nil {
			t.Fatalf("%q: want an error, got state %v", where, st)
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "compaction.where") {
			t.Fatalf("%q: error %q does not say %q", where, err, want)
		}
	}
}
