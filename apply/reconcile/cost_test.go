package reconcile_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icewright/icewright/apply/reconcile"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// counter is a metric's value as a number (0 when the series is absent).
func counter(t *testing.T, r *reconcile.Reconciler, series string) float64 {
	t.Helper()
	_, body := scrape(t, r.Handler(), "/metrics")
	v := metric(t, body, series)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s = %q", series, v)
	}
	return f
}

// TestReconcileSkipsUnchangedTables: a listing observes only what changed.
// Two tables in policy under a policy with no time-based rule are observed
// once (new), then skipped at every listing while their metadata location
// stays byte-equal; a writer's commit to one of them, with no trigger, is
// seen at the next listing (changed), and the table is brought back into
// policy; the other is never observed again.
func TestReconcileSkipsUnchangedTables(t *testing.T) {
	l := newLake(t)
	l.table("steady", 1)
	busy := l.table("busy", 1)
	const interval = 400 * time.Millisecond
	r := reconcile.New(l.load, open, reconcile.Options{Interval: interval, Jitter: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first listing", r.Ready)
	first := statusOf(t, r)
	for _, a := range []string{"lake.sales.steady", "lake.sales.busy"} {
		if s := first[a]; s.Result != reconcile.ResultInPolicy || s.LastObserved.IsZero() || !s.NextDue.IsZero() {
			t.Fatalf("%s after the first listing: %+v (want in policy, observed, nothing due by time)", a, s)
		}
	}
	if got := counter(t, r, `icewright_tables_observed_total{reason="new"}`); got != 2 {
		t.Fatalf("observed as new: %v, want 2", got)
	}
	waitFor(t, "two listings that skip both tables", func() bool {
		return counter(t, r, "icewright_tables_skipped_total") >= 4
	})

	appended := time.Now()
	testkit.Append(t, busy, 3, 20, 1)
	waitFor(t, "the writer's table observed as changed", func() bool {
		return counter(t, r, `icewright_tables_observed_total{reason="changed"}`) >= 1
	})
	seen := time.Since(appended)
	waitFor(t, "the writer's table back in policy", func() bool {
		return statusOf(t, r)["lake.sales.busy"].Result == reconcile.ResultInPolicy &&
			statusOf(t, r)["lake.sales.busy"].Runs > 0
	})
	if got := l.actions(); got["lake.sales.busy"] != 0 {
		t.Fatalf("the changed table still has %d actions", got["lake.sales.busy"])
	}
	// Seen by the listing after the commit: at most an interval, plus the
	// listing's own time on a busy machine.
	if seen > interval+5*time.Second {
		t.Errorf("the change was seen %s after the commit, interval %s", seen, interval)
	}
	st := statusOf(t, r)["lake.sales.steady"]
	if !st.LastObserved.Equal(first["lake.sales.steady"].LastObserved) || st.Runs != 0 {
		t.Errorf("the unchanged table was observed again: %+v", st)
	}
	if got := counter(t, r, `icewright_actions_total{action="compact",outcome="done",reason=""}`); got != 1 {
		t.Errorf("compactions %v, want 1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// retentionOnlyHCL expires snapshots older than 7 days; nothing else.
const retentionOnlyHCL = `
policy "base" {
  target_file_size = "64MiB"
  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 1
  }
}

tables "lake.sales.*" {
  policy = policy.base
}
`

// TestReconcileExpiresWithoutCommit: a table in policy whose snapshots age
// past max_age with no commit at all is still expired on time. With an
// injected clock: the table's older snapshot is 6 days old, so the plan
// says it is due in a day (diff.NextDue); listings skip it meanwhile; the
// clock moves past the snapshot's 7 days and the next pass observes it
// (due:snapshot_retention) and expires it.
func TestReconcileExpiresWithoutCommit(t *testing.T) {
	l := newLake(t)
	if err := os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(l.lake.HCL()+retentionOnlyHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := l.table("aged", 1)
	tbl = l.lake.Backdate(t, tbl, 6*24*time.Hour)
	testkit.Append(t, tbl, 1, 20, 1)
	if n := len(l.lake.Reload(t, "sales.aged").Metadata().Snapshots()); n != 2 {
		t.Fatalf("setup: %d snapshots", n)
	}
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	r := reconcile.New(l.load, open, reconcile.Options{Interval: 300 * time.Millisecond, Jitter: -1, Now: now})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// The first pass sets the retention properties the policy owns; the
	// table is then in policy, due when its older snapshot passes 7 days.
	waitFor(t, "the table in policy with a due time", func() bool {
		s := statusOf(t, r)["lake.sales.aged"]
		return s.Result == reconcile.ResultInPolicy && !s.NextDue.IsZero()
	})
	s := statusOf(t, r)["lake.sales.aged"]
	if s.DueRule != diff.DueRetention {
		t.Fatalf("due rule %q, want %q", s.DueRule, diff.DueRetention)
	}
	if d := s.NextDue.Sub(now()); d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("due in %s, want about a day", d)
	}
	skipped := counter(t, r, "icewright_tables_skipped_total")
	waitFor(t, "a listing that skips the table", func() bool {
		return counter(t, r, "icewright_tables_skipped_total") > skipped
	})
	if n := len(l.lake.Reload(t, "sales.aged").Metadata().Snapshots()); n != 2 {
		t.Fatalf("expired before its time: %d snapshots", n)
	}

	offset.Store(int64(24*time.Hour + time.Hour))
	waitFor(t, "the expiry", func() bool {
		return len(l.lake.Reload(t, "sales.aged").Metadata().Snapshots()) == 1
	})
	if got := counter(t, r, `icewright_tables_observed_total{reason="due:snapshot_retention"}`); got < 1 {
		t.Errorf("observed by its due time %v times, want at least 1", got)
	}
	// The commit lands before the apply returns and is counted.
	waitFor(t, "the expiry counted", func() bool {
		return counter(t, r, `icewright_actions_total{action="expire_snapshots",outcome="done",reason=""}`) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReconcileUnreachableCatalogSkipsNothing: a catalog that cannot be
// listed makes no table a skip: the listing says its error and keeps its
// tables.
func TestReconcileUnreachableCatalogSkipsNothing(t *testing.T) {
	l := newLake(t)
	l.table("events", 1)
	var logs testenv.SyncBuffer
	r := reconcile.New(l.load, open, reconcile.Options{Interval: 200 * time.Millisecond, Jitter: -1,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first listing", r.Ready)
	listings := func() float64 {
		return counter(t, r, `icewright_plan_duration_seconds_count{scope="locations"}`)
	}
	// The catalog's database moves away (a path that cannot be opened).
	gone := strings.Replace(l.lake.HCL(), l.lake.DBPath, filepath.Join(l.dir, "nowhere", "catalog.db"), 1)
	if err := os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(gone+policyHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Reload()
	n := listings()
	waitFor(t, "a listing after the reload", func() bool { return listings() > n })
	skipped := counter(t, r, "icewright_tables_skipped_total")
	n = listings()
	waitFor(t, "two more listings", func() bool { return listings() >= n+2 })
	if got := counter(t, r, "icewright_tables_skipped_total"); got != skipped {
		t.Errorf("tables skipped while their catalog cannot be listed: %v -> %v", skipped, got)
	}
	if out := logs.String(); !strings.Contains(out, `catalog \"lake\"`) || !strings.Contains(out, "level=ERROR") {
		t.Errorf("the catalog's error was not said:\n%s", out)
	}
	if _, ok := statusOf(t, r)["lake.sales.events"]; !ok {
		t.Error("the table of an unreachable catalog was forgotten")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReconcileMissingTableIsAnError: a table block naming a table the
// catalog does not have is an error at every listing, as when each listing
// planned every table, not a table silently never observed.
func TestReconcileMissingTableIsAnError(t *testing.T) {
	l := newLake(t)
	l.table("events", 1)
	src := l.lake.HCL() + policyHCL + "\ntable \"lake.sales.evnts\" {\n  policy = policy.base\n}\n"
	if err := os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := reconcile.New(l.load, open, reconcile.Options{Once: true})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r)
	if s := st["lake.sales.evnts"]; s.Result != reconcile.ResultError || !strings.Contains(s.Error, "does not exist") {
		t.Fatalf("the missing table: %+v", s)
	}
	if s := st["lake.sales.events"]; s.Result != reconcile.ResultInPolicy {
		t.Fatalf("the table that exists: %+v", s)
	}
}
