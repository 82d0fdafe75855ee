package diff

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
)

func TestSelectExpired(t *testing.T) {
	tests := []struct {
		name         string
		st           func() *TableState
		maxAge       time.Duration
		minSnapshots int
		maxRefAge    time.Duration
		added        int
		want         []int64
		wantRefs     []string
		wantKept     int
		wantProt     map[string]int
	}{
		{
			name:   "all young",
			st:     func() *TableState { return linear(3*time.Hour, 2*time.Hour, time.Hour) },
			maxAge: 2 * day, minSnapshots: 1,
			want: []int64{},
		},
		{
			name:   "old ones go, head stays",
			st:     func() *TableState { return linear(10*day, 9*day, 8*day, time.Hour) },
			maxAge: 2 * day, minSnapshots: 1,
			want: []int64{1, 2, 3},
		},
		{
			name:   "min_snapshots keeps old ones",
			st:     func() *TableState { return linear(10*day, 9*day, 8*day, 7*day) },
			maxAge: 2 * day, minSnapshots: 3,
			want: []int64{1}, wantKept: 3,
		},
		{
			name:   "plan-added snapshots push one more out",
			st:     func() *TableState { return linear(10*day, 9*day, 8*day, 7*day) },
			maxAge: 2 * day, minSnapshots: 3, added: 1,
			want: []int64{1, 2}, wantKept: 2,
		},
		{
			name:   "plan-added snapshots replace an old head",
			st:     func() *TableState { return linear(10*day, 9*day) },
			maxAge: 2 * day, minSnapshots: 1, added: 1,
			want: []int64{1, 2},
		},
		{
			name: "tag protects its snapshot only",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, time.Hour)
				s.Refs = append(s.Refs, tag("q3-close", 2))
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			want: []int64{1, 3}, wantKept: 1, wantProt: map[string]int{`tag "q3-close"`: 1},
		},
		{
			name: "old tag removed by max_ref_age",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, time.Hour)
				s.Refs = append(s.Refs, tag("old", 2), tag("fresh", 4))
				return s
			},
			maxAge: 2 * day, minSnapshots: 1, maxRefAge: 5 * day,
			want: []int64{1, 2, 3}, wantRefs: []string{"old"},
		},
		{
			name: "ref's own max ref age beats the policy",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, time.Hour)
				s.Refs = append(s.Refs, Ref{Name: "keep", Type: "tag", SnapshotID: 2, MaxRefAgeMs: ptr((30 * day).Milliseconds())})
				return s
			},
			maxAge: 2 * day, minSnapshots: 1, maxRefAge: 5 * day,
			want: []int64{1, 3}, wantKept: 1, wantProt: map[string]int{`tag "keep"`: 1},
		},
		{
			name: "table property max ref age when the policy has none",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, time.Hour)
				s.Properties["history.expire.max-ref-age-ms"] = "86400000"
				s.Refs = append(s.Refs, tag("t", 3))
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			want: []int64{1, 2, 3}, wantRefs: []string{"t"},
		},
		{
			name:   "main is never removed by age",
			st:     func() *TableState { return linear(10*day, 9*day) },
			maxAge: 2 * day, minSnapshots: 1, maxRefAge: day,
			want: []int64{1}, wantKept: 1,
		},
		{
			name: "branch with its own retention keeps its ancestry",
			st: func() *TableState {
				// 1 <- 2 <- 3 (main); 2 <- 4 <- 5 (audit)
				s := linear(10*day, 9*day, 8*day)
				s.Snapshots = append(s.Snapshots, snap(4, 2, 7*day), snap(5, 4, 6*day))
				s.Refs = append(s.Refs, Ref{Name: "audit", Type: "branch", SnapshotID: 5, MinSnapshotsToKeep: ptr(10)})
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			// audit keeps 5, 4, 2, 1 (min 10); main keeps only 3.
			want: []int64{}, wantKept: 5,
			wantProt: map[string]int{`branch "audit"`: 4},
		},
		{
			name: "branch max snapshot age override",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day)
				s.Snapshots = append(s.Snapshots, snap(4, 2, 7*day), snap(5, 4, 6*day))
				s.Refs = append(s.Refs, Ref{Name: "audit", Type: "branch", SnapshotID: 5, MaxSnapshotAgeMs: ptr((8 * day).Milliseconds() - 1)})
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			// audit keeps 5 (6d) and 4 (7d); 2 (9d) is too old.
			want: []int64{1, 2}, wantKept: 3,
			wantProt: map[string]int{`branch "audit"`: 2},
		},
		{
			name: "rollback: newer snapshots off main expire by age",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, time.Hour)
				s.CurrentSnapshotID = ptr(int64(2))
				s.Refs = []Ref{branch("main", 2)}
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			// 3 is old and unreachable; 4 is young and kept; 1 beyond min.
			want: []int64{1, 3}, wantKept: 1,
		},
		{
			name: "expired ref's young snapshots stay",
			st: func() *TableState {
				s := linear(10*day, time.Hour)
				s.Snapshots = append(s.Snapshots, snap(3, 1, 6*day), snap(4, 3, 30*time.Minute))
				s.Refs = append(s.Refs, Ref{Name: "dev", Type: "branch", SnapshotID: 3, MaxRefAgeMs: ptr(day.Milliseconds())})
				return s
			},
			maxAge: 2 * day, minSnapshots: 1,
			want: []int64{1, 3}, wantRefs: []string{"dev"},
		},
		{
			name: "properties decide when options are not passed",
			st: func() *TableState {
				s := linear(10*day, 9*day, 8*day, 7*day)
				s.Properties["history.expire.min-snapshots-to-keep"] = "2"
				s.Properties["max-snapshot-age-ms"] = "1" // legacy key: used because the standard one is absent
				return s
			},
			want: []int64{1, 2}, wantKept: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := SelectExpired(tt.st(), tt.maxAge, tt.minSnapshots, tt.maxRefAge, tt.added, testNow)
			if sel.Problem != "" {
				t.Fatalf("problem: %s", sel.Problem)
			}
			if !reflect.DeepEqual(sel.Expired, tt.want) {
				t.Errorf("expired = %v, want %v", sel.Expired, tt.want)
			}
			if !reflect.DeepEqual(sel.RefsToRemove, tt.wantRefs) {
				t.Errorf("refs to remove = %v, want %v", sel.RefsToRemove, tt.wantRefs)
			}
			if sel.Kept != tt.wantKept {
				t.Errorf("kept = %d, want %d", sel.Kept, tt.wantKept)
			}
			if !reflect.DeepEqual(sel.ProtectedByRef, tt.wantProt) {
				t.Errorf("protected = %v, want %v", sel.ProtectedByRef, tt.wantProt)
			}
		})
	}
}

func TestSelectExpiredMissingRefSnapshot(t *testing.T) {
	st := linear(10*day, 9*day)
	st.Refs = append(st.Refs, tag("ghost", 99))
	sel := SelectExpired(st, 2*day, 1, 0, 0, testNow)
	if sel.Problem == "" || len(sel.Expired) != 0 {
		t.Fatalf("selection = %+v, want a problem and nothing expired", sel)
	}
	pol := fullPolicy()
	tp := PlanTable(pol, st, testNow)
	if len(tp.Refusals) == 0 || !strings.Contains(tp.Refusals[0].Reason, "ghost") {
		t.Fatalf("refusals = %v", tp.Refusals)
	}
}

func TestPlanExpire(t *testing.T) {
	pol := emptyPolicy()
	pol.SnapshotRetention = fullPolicy().SnapshotRetention
	st := linear(41*day, 20*day, 3*day, time.Hour)
	st.Refs = append(st.Refs, tag("q3-close", 2))
	a := findAction(t, PlanTable(pol, st, testNow), ExpireSnapshots)
	e := a.Expire
	if !reflect.DeepEqual(e.SnapshotIDs, []int64{1, 3}) || e.OldestTimestampMs != testNow.Add(-41*day).UnixMilli() ||
		e.MaxAge != "2d" || e.MaxAgeMs != (2*day).Milliseconds() || e.MinSnapshots != 1 || e.Kept != 1 ||
		e.ProtectedByRef[`tag "q3-close"`] != 1 || e.SnapshotsAddedByPlan != 0 {
		t.Fatalf("expire = %+v", e)
	}
	if !a.Destructive || !strings.HasPrefix(a.Reason, `snapshot_retention.max_age = "2d" (main.icewright.hcl:11)`) {
		t.Fatalf("action = %+v", a)
	}

	t.Run("not declared", func(t *testing.T) {
		if tp := PlanTable(emptyPolicy(), st, testNow); !tp.Empty() {
			t.Fatalf("actions %v", actionTypes(tp))
		}
	})
	t.Run("gc disabled refuses and warns", func(t *testing.T) {
		s := linear(41*day, time.Hour)
		s.Properties["gc.enabled"] = "false"
		tp := PlanTable(pol, s, testNow)
		if len(tp.Actions) != 0 || len(tp.Refusals) != 1 || tp.Refusals[0].Action != "expire_snapshots" {
			t.Fatalf("plan = %+v", tp)
		}
		if len(tp.Warnings) != 1 || tp.Warnings[0].Code != config.LintGCDisabled || tp.Warnings[0].Origin != "main.icewright.hcl:10" {
			t.Fatalf("warnings = %+v", tp.Warnings)
		}
	})
	t.Run("gc enabled by the plan's own properties", func(t *testing.T) {
		s := linear(41*day, time.Hour)
		s.Properties["gc.enabled"] = "false"
		p := emptyPolicy()
		p.SnapshotRetention = pol.SnapshotRetention
		p.DerivedProperties = map[string]config.Setting[string]{"gc.enabled": set("true", 50)}
		tp := PlanTable(p, s, testNow)
		if len(tp.Refusals) != 0 || len(tp.Actions) != 2 {
			t.Fatalf("plan = %+v", tp)
		}
	})
}

func TestCommitGapWarning(t *testing.T) {
	pol := fullPolicy() // older_than 3d
	st := linear(20*day, 10*day, 9*day)
	st.Orphans = cleanScan(st)
	tp := PlanTable(pol, st, testNow)
	var w *Warning
	for i := range tp.Warnings {
		if tp.Warnings[i].Code == config.LintCommitGap {
			w = &tp.Warnings[i]
		}
	}
	if w == nil || w.Origin != "main.icewright.hcl:21" || !strings.Contains(w.Message, "(10d)") {
		t.Fatalf("warnings = %+v", tp.Warnings)
	}
	st = linear(3*day, 2*day, day)
	st.Orphans = cleanScan(st)
	if tp := PlanTable(pol, st, testNow); len(tp.Warnings) != 0 {
		t.Fatalf("warnings = %+v", tp.Warnings)
	}
}

// After an expiry, a tag keeps an old snapshot whose children are gone:
// the time from it to the oldest surviving snapshot of main is not a gap
// any writer left, so it must not warn (it did, and the warning stayed).
func TestCommitGapIgnoresExpiredHistory(t *testing.T) {
	pol := fullPolicy() // older_than 3d
	st := linear(20*day, 19*day, 18*day, 2*day, day, 0)
	// Expired: snapshots 2 and 3, so 4's parent (3) is gone; 1 is kept by a tag.
	st.Snapshots = append(st.Snapshots[:1], st.Snapshots[3:]...)
	st.Refs = append(st.Refs, Ref{Name: "q3-close", Type: "tag", SnapshotID: 1})
	st.Orphans = cleanScan(st)
	for _, w := range PlanTable(pol, st, testNow).Warnings {
		if w.Code == config.LintCommitGap {
			t.Fatalf("false commit-gap warning after expiry: %+v", w)
		}
	}
	// A real gap between a snapshot and its parent still warns.
	st = linear(20*day, 19*day, 18*day, 10*day, day)
	st.Orphans = cleanScan(st)
	found := false
	for _, w := range PlanTable(pol, st, testNow).Warnings {
		found = found || (w.Code == config.LintCommitGap && strings.Contains(w.Message, "(9d)") && w.Name == "orphan_age_below_commit_gap")
	}
	if !found {
		t.Fatalf("no commit-gap warning for a 9-day gap between parent and child: %+v", PlanTable(pol, st, testNow).Warnings)
	}
}

// A retention block that leaves max_age and min_snapshots unset defers to
// the table's own properties instead of imposing the defaults.
func TestPlanExpireUnsetAttributesUseTableProperties(t *testing.T) {
	pol := emptyPolicy()
	pol.SnapshotRetention = config.RetentionPolicy{Declared: true, DeclRange: at(10), MaxAge: def(5 * day), MinSnapshots: def(1)}
	st := linear(12*day, 11*day, 7*day, 6*day, time.Hour)
	st.Properties["history.expire.max-snapshot-age-ms"] = "864000000" // 10d
	st.Properties["history.expire.min-snapshots-to-keep"] = "2"
	a := findAction(t, PlanTable(pol, st, testNow), ExpireSnapshots)
	// 10d keeps 3, 4, 5; without the property the 5d default would take 3 and 4 too.
	if !reflect.DeepEqual(a.Expire.SnapshotIDs, []int64{1, 2}) || a.Expire.MaxAge != "10d" || a.Expire.MinSnapshots != 2 {
		t.Fatalf("expire = %+v", a.Expire)
	}
	if !strings.Contains(a.Reason, "table property history.expire.max-snapshot-age-ms = 864000000") {
		t.Fatalf("reason = %q", a.Reason)
	}

	delete(st.Properties, "history.expire.max-snapshot-age-ms")
	a = findAction(t, PlanTable(pol, st, testNow), ExpireSnapshots)
	// min-snapshots-to-keep = 2 still keeps 4 and 5.
	if !reflect.DeepEqual(a.Expire.SnapshotIDs, []int64{1, 2, 3}) || a.Reason != `snapshot_retention.max_age = "5d" (default; block at main.icewright.hcl:10)` {
		t.Fatalf("expire = %+v, reason %q", a.Expire, a.Reason)
	}
}

func TestSortWithoutOrderWarning(t *testing.T) {
	pol := emptyPolicy()
	pol.Compaction = fullPolicy().Compaction
	pol.Compaction.Strategy = set("sort", 8)
	st := linear(day)
	tp := PlanTable(pol, st, testNow)
	if len(tp.Warnings) != 1 || tp.Warnings[0].Code != config.LintSortWithoutOrder || tp.Warnings[0].Origin != "main.icewright.hcl:8" {
		t.Fatalf("warnings = %+v", tp.Warnings)
	}
	st.SortOrder = []SortField{{Transform: "identity", Column: "a"}}
	if tp := PlanTable(pol, st, testNow); len(tp.Warnings) != 0 {
		t.Fatalf("warnings with a table sort order = %+v", tp.Warnings)
	}
}

// The current snapshot is main even when the metadata has no refs (v1), and
// inconsistent metadata is refused rather than guessed at.
func TestSelectExpiredImplicitMain(t *testing.T) {
	st := linear(10*day, 9*day, 8*day)
	st.Refs = nil
	sel := SelectExpired(st, 2*day, 1, 0, 0, testNow)
	if !reflect.DeepEqual(sel.Expired, []int64{1, 2}) {
		t.Fatalf("expired = %v, want [1 2] (the current snapshot stays)", sel.Expired)
	}
	st = linear(10*day, 9*day, 8*day)
	st.CurrentSnapshotID = ptr(int64(2))
	if sel := SelectExpired(st, 2*day, 1, 0, 0, testNow); sel.Problem == "" || len(sel.Expired) != 0 {
		t.Fatalf("selection = %+v, want a problem", sel)
	}
}

func TestGCDisabledWithNothingToExpire(t *testing.T) {
	pol := emptyPolicy()
	pol.SnapshotRetention = fullPolicy().SnapshotRetention
	st := linear(time.Hour)
	st.Properties["gc.enabled"] = "false"
	tp := PlanTable(pol, st, testNow)
	if !tp.Empty() || len(tp.Warnings) != 1 || tp.Warnings[0].Code != config.LintGCDisabled {
		t.Fatalf("plan = %+v", tp)
	}
}

func TestWhereOnUnpartitionedTableWarning(t *testing.T) {
	pol := emptyPolicy()
	pol.Compaction = fullPolicy().Compaction
	pol.Compaction.Where = set("ts >= '2026-11-01'", 12)
	st := linear(day)
	st.Specs = []PartitionSpec{{ID: 0, Fields: []string{}}}
	tp := PlanTable(pol, st, testNow)
	if len(tp.Warnings) != 1 || tp.Warnings[0].Code != config.LintWhereUnpartition || tp.Warnings[0].Origin != "main.icewright.hcl:12" {
		t.Fatalf("warnings = %+v", tp.Warnings)
	}
	// Once any spec is partitioned (spec evolution) the where can restrict.
	st.Specs = append(st.Specs, PartitionSpec{ID: 1, Fields: []string{"day(ts)"}})
	if tp := PlanTable(pol, st, testNow); len(tp.Warnings) != 0 {
		t.Fatalf("partitioned: warnings = %+v", tp.Warnings)
	}
}
