package diff

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
)

// retentionPolicy keeps snapshots maxAge and at least minSnapshots.
func retentionPolicy(maxAge time.Duration, minSnapshots int) *config.Effective {
	p := emptyPolicy()
	p.SnapshotRetention = config.RetentionPolicy{Declared: true, DeclRange: at(10),
		MaxAge: set(maxAge, 11), MinSnapshots: set(minSnapshots, 12)}
	return p
}

// orphanPolicy sweeps files older than 3d; every 0: no sweep interval.
func orphanPolicy(every time.Duration) *config.Effective {
	p := emptyPolicy()
	p.OrphanFiles = config.OrphanPolicy{Declared: true, DeclRange: at(20),
		OlderThan: set(3*day, 21), MaxOrphanRatio: set(0.25, 22), MinFilesForRatio: def(0),
		PrefixMismatch: def("error"), Every: def(every)}
	return p
}

// crossCheck holds NextDue to the plan: at due-1ms the plan of kind is
// the plan at now, at due it differs; with no due time, the plan of kind
// is the same a thousand days later.
func crossCheck(t *testing.T, pol *config.Effective, st *TableState, kind ActionType) time.Time {
	t.Helper()
	due, rule := NextDue(pol, st, testNow)
	base := PlanTable(pol, st, testNow)
	if due.IsZero() {
		if later := PlanTable(pol, st, testNow.Add(1000*day)); !sameKind(base, later, kind) {
			t.Fatalf("no due time, but the %s plan changes within 1000 days", kind)
		}
		return due
	}
	if !due.After(testNow) {
		t.Fatalf("due %s (%s) is not after now", due, rule)
	}
	if before := PlanTable(pol, st, due.Add(-time.Millisecond)); !sameKind(base, before, kind) {
		t.Fatalf("the %s plan changes before NextDue %s (%s)", kind, due, rule)
	}
	if at := PlanTable(pol, st, due); sameKind(base, at, kind) {
		t.Fatalf("the %s plan at NextDue %s (%s) is the plan at now", kind, due, rule)
	}
	return due
}

func TestNextDueRetention(t *testing.T) {
	// Snapshot 1 is a day old and not main's head: it expires when it
	// passes max_age, a day from now.
	st := linear(day, 12*time.Hour)
	pol := retentionPolicy(2*day, 1)
	due := crossCheck(t, pol, st, ExpireSnapshots)
	if want := testNow.Add(day); due.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("due %s, want %s", due, want)
	}
	if _, rule := NextDue(pol, st, testNow); rule != DueRetention {
		t.Fatalf("rule %q", rule)
	}
	if a := findAction(t, PlanTable(pol, st, due), ExpireSnapshots); len(a.Expire.SnapshotIDs) != 1 || a.Expire.SnapshotIDs[0] != 1 {
		t.Fatalf("at due: %+v", a.Expire)
	}

	// min_snapshots keeps both whatever their age: never due by time.
	if due := crossCheck(t, retentionPolicy(2*day, 5), st, ExpireSnapshots); !due.IsZero() {
		t.Fatalf("min_snapshots keeps every snapshot, yet due %s", due)
	}

	// A tag whose own max ref age passes first.
	st = linear(day, 12*time.Hour)
	st.Refs = append(st.Refs, Ref{Name: "t", Type: "tag", SnapshotID: 1, MaxRefAgeMs: ptr((30 * time.Hour).Milliseconds())})
	due = crossCheck(t, retentionPolicy(2*day, 1), st, ExpireSnapshots)
	if want := testNow.Add(6 * time.Hour); due.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("tag: due %s, want %s", due, want)
	}

	// Without a policy age, the table's property decides.
	st = linear(day, 12*time.Hour)
	st.Properties[propMaxSnapshotAgeMs] = "259200000" // 3d
	pol = emptyPolicy()
	pol.SnapshotRetention = config.RetentionPolicy{Declared: true, MinSnapshots: set(1, 12)}
	due = crossCheck(t, pol, st, ExpireSnapshots)
	if want := testNow.Add(2 * day); due.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("property: due %s, want %s", due, want)
	}
}

// TestNextDueRetentionRandom: random histories, tags and retention; NextDue
// always agrees with PlanTable (crossCheck).
func TestNextDueRetentionRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 3))
	for i := range 300 {
		n := 1 + r.IntN(8)
		ages := make([]time.Duration, n)
		age := time.Duration(r.Int64N(int64(20 * day)))
		for j := range ages {
			ages[j] = age
			age = time.Duration(r.Int64N(int64(age) + 1))
		}
		st := linear(ages...)
		if r.IntN(2) == 0 {
			ref := Ref{Name: "tag", Type: "tag", SnapshotID: 1 + r.Int64N(int64(n))}
			if r.IntN(2) == 0 {
				ref.MaxRefAgeMs = ptr(r.Int64N((30 * day).Milliseconds()))
			}
			st.Refs = append(st.Refs, ref)
		}
		pol := retentionPolicy(time.Duration(1+r.Int64N(int64(10*day))), 1+r.IntN(4))
		if r.IntN(3) == 0 {
			pol.SnapshotRetention.MaxRefAge = set(time.Duration(1+r.Int64N(int64(10*day))), 13)
		}
		t.Run("", func(t *testing.T) {
			t.Logf("case %d: ages %v", i, ages)
			crossCheck(t, pol, st, ExpireSnapshots)
		})
	}
}

func TestNextDueOrphans(t *testing.T) {
	st := linear(day)
	st.Orphans = cleanScan(st)
	st.Orphans.Candidates = []FileInfo{{Path: "s3://b/t/data/x.parquet", Size: 1, MtimeMs: ago(day)}}

	// The stray passes older_than (3d) two days from now.
	due := crossCheck(t, orphanPolicy(0), st, RemoveOrphanFiles)
	if want := testNow.Add(2 * day); due.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("due %s, want %s", due, want)
	}
	// The sweep's own interval comes first.
	due, rule := NextDue(orphanPolicy(24*time.Hour), st, testNow)
	if !due.Equal(testNow.Add(24*time.Hour)) || rule != DueOrphanSweep {
		t.Fatalf("with every = 24h: %s %q", due, rule)
	}

	// A quarantine run's purge time.
	st.Orphans.Candidates = nil
	st.Orphans.Quarantine = []QuarantineRun{{RunID: "r", Files: 1, Bytes: 1, CreatedAtMs: ago(day), PurgeAfterMs: testNow.Add(5 * day).UnixMilli(), ManifestDigest: "sha256:a"}}
	due = crossCheck(t, orphanPolicy(0), st, RemoveOrphanFiles)
	if !due.Equal(testNow.Add(5 * day)) {
		t.Fatalf("purge: due %s", due)
	}
	if _, rule := NextDue(orphanPolicy(0), st, testNow); rule != DueOrphanAge {
		t.Fatalf("rule %q", rule)
	}

	// Nothing found, no interval: never due by time.
	st.Orphans.Quarantine = nil
	if due := crossCheck(t, orphanPolicy(0), st, RemoveOrphanFiles); !due.IsZero() {
		t.Fatalf("clean scan: due %s", due)
	}
}

func TestNextDueAgeingAndWhere(t *testing.T) {
	pol := emptyPolicy()
	pol.PartitionAgeing = config.AgeingPolicy{Declared: true, After: def(90 * day), From: def("day"), To: def("month")}
	// now - 90d is 2026-09-01T12:00Z: September's window closes at
	// 2026-10-01, which is aged 90 days later.
	due, rule := NextDue(pol, linear(day), testNow)
	if want := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Add(90 * day); !due.Equal(want) || rule != DueAgeing {
		t.Fatalf("ageing: %s %q, want %s", due, rule, want)
	}
	for grain, want := range map[string]time.Time{
		"hour":  time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC),
		"day":   time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"month": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"year":  time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got := nextWindowStart(grain, testNow); !got.Equal(want) {
			t.Errorf("nextWindowStart(%s) = %s, want %s", grain, got, want)
		}
	}

	pol = emptyPolicy()
	pol.Compaction = config.CompactionPolicy{Declared: true, Where: def("ts >= current_date - interval '7' day")}
	if due, rule := NextDue(pol, linear(day), testNow); !due.Equal(testNow) || rule != DueWhereClock {
		t.Fatalf("where: %s %q", due, rule)
	}
	for where, want := range map[string]bool{
		"":                            false,
		"region = 'eu'":               false,
		"note = 'now'":                false,
		`"now" = 1`:                   false,
		"nowhere = 1":                 false,
		"ts < NOW() - interval '1' h": true,
		"ts >= CURRENT_TIMESTAMP":     true,
		"d=current_date":              true,
	} {
		if got := WhereReadsClock(where); got != want {
			t.Errorf("WhereReadsClock(%q) = %v, want %v", where, got, want)
		}
	}

	// No time-based rule: never due.
	if due, rule := NextDue(emptyPolicy(), linear(day), testNow); !due.IsZero() || rule != "" {
		t.Fatalf("empty policy: %s %q", due, rule)
	}
}
