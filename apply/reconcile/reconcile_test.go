package reconcile_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/apply/reconcile"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// policyHCL: compaction once two small files are in a partition; nothing
// else (so that each action the tests count is a compaction).
const policyHCL = `
policy "base" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
  }
}

tables "lake.sales.*" {
  policy = policy.base
}
`

type lake struct {
	t    *testing.T
	dir  string
	lake *testkit.Lakehouse
}

func newLake(t *testing.T) *lake {
	t.Helper()
	dir := t.TempDir()
	l := &lake{t: t, dir: dir, lake: testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")}
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(l.lake.HCL()+policyHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *lake) load() (*config.Config, hcl.Diagnostics, error) {
	cfg, diags := config.Load(l.dir, config.LoadOptions{})
	if diags.HasErrors() {
		return nil, nil, diags
	}
	return cfg, nil, nil
}

func open(cfg *config.Config) *providers.Session { return providers.Open(cfg, providers.Options{}) }

// table creates sales.NAME with files commits small files (a compaction is
// due when commits >= 2).
func (l *lake) table(name string, commits int) *table.Table {
	l.t.Helper()
	// The property the policy derives from target_file_size is set, so
	// that compaction is the only action the tests see.
	tbl := l.lake.CreateTable(l.t, "sales."+name, testkit.TableOptions{Properties: map[string]string{
		"write.target-file-size-bytes": fmt.Sprint(64 << 20),
	}})
	return testkit.Append(l.t, tbl, commits, 20, 1)
}

// actions is the number of actions each table's plan has now.
func (l *lake) actions() map[string]int {
	l.t.Helper()
	out := map[string]int{}
	for addr, tp := range l.planned() {
		out[addr] = len(tp.Actions)
	}
	return out
}

func statusOf(t *testing.T, r *reconcile.Reconciler) map[string]reconcile.TableStatus {
	t.Helper()
	out := map[string]reconcile.TableStatus{}
	for _, s := range r.Status() {
		out[s.Address] = s
	}
	return out
}

func scrape(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// metric returns the value of the series line that starts with name{labels}.
func metric(t *testing.T, body, series string) string {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestReconcileOnceConverges: one pass applies what each table's plan
// shows, keeps every row, and the next plan is empty; the metrics and the
// status say so.
func TestReconcileOnceConverges(t *testing.T) {
	l := newLake(t)
	debt := l.table("debt", 4)
	l.table("fine", 1)
	ids := testkit.ScanIDs(t, debt)
	if got := l.actions(); got["lake.sales.debt"] == 0 || got["lake.sales.fine"] != 0 {
		t.Fatalf("setup: actions %v", got)
	}

	// A watch (as the command sets by default) must not keep a -once
	// run from returning.
	r := reconcile.New(l.load, open, reconcile.Options{Once: true, TableMetrics: true, Watch: 10 * time.Millisecond,
		Sources: func() (string, error) { return config.SourceDigest(l.dir, nil) }})
	if code, _ := scrape(t, r.Handler(), "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz before the first listing: %d, want 503", code)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r)
	if st["lake.sales.debt"].Result != reconcile.ResultApplied || st["lake.sales.fine"].Result != reconcile.ResultInPolicy {
		t.Fatalf("status %+v", st)
	}
	if got := l.actions(); got["lake.sales.debt"] != 0 || got["lake.sales.fine"] != 0 {
		t.Fatalf("after one pass the plan still has actions: %v", got)
	}
	if !maps.Equal(testkit.ScanIDs(t, l.lake.Reload(t, "sales.debt")), ids) {
		t.Fatal("rows changed")
	}
	h := r.Handler()
	if code, _ := scrape(t, h, "/readyz"); code != http.StatusOK {
		t.Errorf("readyz after the listing: %d", code)
	}
	_, body := scrape(t, h, "/metrics")
	for series, want := range map[string]string{
		`icewright_actions_total{action="compact",outcome="done",reason=""}`: "1",
		`icewright_tables{state="in_policy"}`:                                "2",
		`icewright_tables{state="out_of_policy"}`:                            "0",
		`icewright_table_pending_actions{table="lake.sales.debt"}`:           "0",
		`icewright_table_pending_requests{table="lake.sales.debt"}`:          "0",
	} {
		if got := metric(t, body, series); got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	if metric(t, body, "icewright_bytes_rewritten_total") == "0" {
		t.Error("no bytes counted as rewritten")
	}
}

// TestReconcileShadowChangesNothing: -shadow plans and reports, and leaves
// every table's metadata as it was.
func TestReconcileShadowChangesNothing(t *testing.T) {
	l := newLake(t)
	before := l.table("debt", 3).MetadataLocation()
	r := reconcile.New(l.load, open, reconcile.Options{Once: true, Shadow: true, TableMetrics: true})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := l.lake.Reload(t, "sales.debt").MetadataLocation(); got != before {
		t.Fatalf("shadow changed the table: %s -> %s", before, got)
	}
	st := statusOf(t, r)["lake.sales.debt"]
	if st.Result != reconcile.ResultPlanned || len(st.PendingActions) == 0 {
		t.Fatalf("status %+v", st)
	}
	_, body := scrape(t, r.Handler(), "/metrics")
	if got := metric(t, body, `icewright_actions_total{action="compact",outcome="planned",reason="shadow"}`); got != "1" {
		t.Errorf("planned compactions %q, want 1", got)
	}
	// Every one of its 3 files is a compaction candidate; its snapshots
	// were made seconds ago.
	if got := metric(t, body, `icewright_table_small_file_ratio{table="lake.sales.debt"}`); got != "1" {
		t.Errorf("small file ratio %q, want 1", got)
	}
	if got, err := strconv.ParseFloat(metric(t, body, `icewright_table_oldest_snapshot_age_seconds{table="lake.sales.debt"}`), 64); err != nil || got <= 0 || got > 600 {
		t.Errorf("oldest snapshot age %v (%v), want a few seconds", got, err)
	}
	// The compaction it would run is pending: its estimate is exported
	// (local storage: quantities, no money series).
	for _, series := range []string{`icewright_table_pending_requests{table="lake.sales.debt"}`, `icewright_table_pending_bytes_read{table="lake.sales.debt"}`} {
		if got, err := strconv.ParseFloat(metric(t, body, series), 64); err != nil || got <= 0 {
			t.Errorf("%s = %v (%v), want the pending compaction's estimate", series, got, err)
		}
	}
	if strings.Contains(body, "icewright_table_pending_cost_usd{") {
		t.Error("a money series for a table without prices")
	}
}

// TestReconcileTriggerThenStop: a running reconciler finds a table in
// policy; a writer's commits put it out of policy and a trigger brings its
// reconcile forward (long before the interval); cancelling stops Run.
func TestReconcileTriggerThenStop(t *testing.T) {
	l := newLake(t)
	tbl := l.table("events", 1)
	r := reconcile.New(l.load, open, reconcile.Options{Interval: time.Hour, Debounce: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first listing", func() bool { return r.Ready() })
	if st := statusOf(t, r)["lake.sales.events"]; st.Result != reconcile.ResultInPolicy {
		t.Fatalf("before the writer: %+v", st)
	}

	testkit.Append(t, tbl, 3, 20, 1)
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/trigger?table=lake.sales.events", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("trigger: %s", resp.Status)
	}
	resp, err = http.Post(srv.URL+"/trigger?table=lake.sales.nope", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("trigger of an unknown table: %s, want 404", resp.Status)
	}
	waitFor(t, "the triggered reconcile", func() bool {
		return statusOf(t, r)["lake.sales.events"].Result == reconcile.ResultApplied
	})
	if got := l.actions()["lake.sales.events"]; got != 0 {
		t.Fatalf("after the triggered reconcile the plan has %d actions", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

// TestReconcilersShareTables: three reconcilers on one lakehouse at once
// compact each table exactly once (the leases): one replace snapshot per
// table, and every table back in policy.
func TestReconcilersShareTables(t *testing.T) {
	l := newLake(t)
	const n = 6
	rows := map[string]map[int64]int{}
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		rows[name] = testkit.ScanIDs(t, l.table(name, 3))
	}
	var wg sync.WaitGroup
	rs := make([]*reconcile.Reconciler, 3)
	for i := range rs {
		rs[i] = reconcile.New(l.load, open, reconcile.Options{Once: true, Parallelism: 2,
			Apply: apply.ApplyOptions{RunID: fmt.Sprintf("reconciler-%d", i), LockOwner: fmt.Sprintf("reconciler %d", i)}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rs[i].Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for name, ids := range rows {
		tbl := l.lake.Reload(t, "sales."+name)
		replaces := 0
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary != nil && s.Summary.Operation == table.OpReplace {
				replaces++
			}
		}
		if replaces != 1 {
			t.Errorf("%s: %d replace snapshots, want exactly 1", name, replaces)
		}
		if !maps.Equal(testkit.ScanIDs(t, tbl), ids) {
			t.Errorf("%s: rows changed", name)
		}
	}
	for addr, a := range l.actions() {
		if a != 0 {
			t.Errorf("%s still has %d actions", addr, a)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReconcileTakesOverDeadRunsTable: a table whose lease a killed run
// still holds is skipped (not failed, not touched) while the lease lasts,
// and reconciled once it has lapsed.
func TestReconcileTakesOverDeadRunsTable(t *testing.T) {
	l := newLake(t)
	before := l.table("held", 3).MetadataLocation()
	cfg, _, err := l.load()
	if err != nil {
		t.Fatal(err)
	}
	sess := open(cfg)
	defer sess.Close()
	ctx := context.Background()
	h, err := sess.Table(ctx, "lake.sales.held")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// A lease whose run died: never renewed, never released.
	if _, err := sess.TakeLease(ctx, h, providers.Lease{Owner: "killed reconciler", RunID: "dead", Since: now, ExpiresAt: now.Add(2 * time.Second)}, now); err != nil {
		t.Fatal(err)
	}

	r := reconcile.New(l.load, open, reconcile.Options{Once: true})
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r)["lake.sales.held"]
	if st.Result != reconcile.ResultSkipped || !strings.Contains(st.Error, "killed reconciler") {
		t.Fatalf("while the dead run's lease lasts: %+v", st)
	}
	if got := l.lake.Reload(t, "sales.held").MetadataLocation(); got != before {
		t.Fatal("a table under another run's lease was changed")
	}

	time.Sleep(time.Until(now.Add(2500 * time.Millisecond)))
	r = reconcile.New(l.load, open, reconcile.Options{Once: true})
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, r)["lake.sales.held"]; st.Result != reconcile.ResultApplied {
		t.Fatalf("after the lease lapsed: %+v", st)
	}
	if got := l.actions()["lake.sales.held"]; got != 0 {
		t.Fatalf("still %d actions", got)
	}
}

// TestReconcileReload: a reloaded configuration with errors is refused and
// the one in force stays; a valid one takes effect (the tables are listed
// again under it).
func TestReconcileReload(t *testing.T) {
	l := newLake(t)
	l.table("events", 3)
	write := func(src string) {
		if err := os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(l.lake.HCL()+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// At first the table's 3 files are below the policy's threshold.
	write(strings.Replace(policyHCL, "min_input_files = 2", "min_input_files = 10", 1))
	// No jitter: a table out of policy after the reload is due at once.
	r := reconcile.New(l.load, open, reconcile.Options{Interval: time.Hour, Jitter: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first listing", r.Ready)
	if st := statusOf(t, r)["lake.sales.events"]; st.Result != reconcile.ResultInPolicy {
		t.Fatalf("before the reload: %+v", st)
	}
	before := statusOf(t, r)["lake.sales.events"].PolicyDigest

	write(policyHCL + "\npolicy \"broken\" {\n  target_file_size = \"lots\"\n}\n")
	r.Reload()
	waitFor(t, "the refused reload", func() bool {
		_, body := scrape(t, r.Handler(), "/metrics")
		return metric(t, body, `icewright_config_loads_total{outcome="failed"}`) == "1"
	})
	if st := statusOf(t, r)["lake.sales.events"]; st.Result != reconcile.ResultInPolicy || st.PolicyDigest != before {
		t.Fatalf("after a refused reload: %+v", st)
	}

	write(policyHCL)
	r.Reload()
	waitFor(t, "the reloaded policy applied", func() bool {
		return statusOf(t, r)["lake.sales.events"].Result == reconcile.ResultApplied
	})
	if st := statusOf(t, r)["lake.sales.events"]; st.PolicyDigest == before {
		t.Errorf("the policy digest did not change with the policy: %+v", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReconcileWatchesConfiguration: with -watch, an edit of the
// configuration's files reloads it without a signal: a broken edit is
// refused (the policy in force stays), a valid one takes effect, and a
// rewrite with the same content or a touch reloads nothing.
func TestReconcileWatchesConfiguration(t *testing.T) {
	l := newLake(t)
	l.table("events", 3)
	file := filepath.Join(l.dir, "main.icewright.hcl")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(l.lake.HCL()+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(strings.Replace(policyHCL, "min_input_files = 2", "min_input_files = 10", 1))
	r := reconcile.New(l.load, open, reconcile.Options{
		Interval: time.Hour, Jitter: -1, Watch: 20 * time.Millisecond,
		Sources: func() (string, error) { return config.SourceDigest(l.dir, nil) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first listing", r.Ready)
	loads := func(outcome string) string {
		_, body := scrape(t, r.Handler(), "/metrics")
		return metric(t, body, `icewright_config_loads_total{outcome="`+outcome+`"}`)
	}
	before := statusOf(t, r)["lake.sales.events"]
	if before.Result != reconcile.ResultInPolicy || loads("ok") != "1" {
		t.Fatalf("before any edit: %+v, %s loads", before, loads("ok"))
	}

	// The same content written again, and a touch: no reload.
	write(strings.Replace(policyHCL, "min_input_files = 2", "min_input_files = 10", 1))
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // ten ticks
	if got := loads("ok"); got != "1" {
		t.Fatalf("an unchanged file reloaded the configuration: %s loads", got)
	}

	write(policyHCL + "\npolicy \"broken\" {\n  target_file_size = \"lots\"\n}\n")
	waitFor(t, "the refused reload", func() bool { return loads("failed") == "1" })
	if st := statusOf(t, r)["lake.sales.events"]; st.Result != reconcile.ResultInPolicy || st.PolicyDigest != before.PolicyDigest {
		t.Fatalf("after a refused reload: %+v", st)
	}

	write(policyHCL)
	waitFor(t, "the edited policy applied", func() bool {
		return statusOf(t, r)["lake.sales.events"].Result == reconcile.ResultApplied
	})
	if st := statusOf(t, r)["lake.sales.events"]; st.PolicyDigest == before.PolicyDigest {
		t.Errorf("the policy digest did not change with the policy: %+v", st)
	}
	if got := loads("ok"); got != "2" {
		t.Errorf("%s successful loads, want 2 (start, the valid edit)", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// retentionHCL is policyHCL with snapshot retention.
var retentionHCL = strings.Replace(policyHCL, "min_input_files = 2\n  }", `min_input_files = 2
  }
  snapshot_retention {
    max_age       = "2d"
    min_snapshots = 1
  }`, 1)

// planned is the plan of every table under the lake's configuration now.
func (l *lake) planned() map[string]diff.TablePlan {
	l.t.Helper()
	cfg, _, err := l.load()
	if err != nil {
		l.t.Fatal(err)
	}
	sess := open(cfg)
	defer sess.Close()
	p, err := apply.Plan(context.Background(), cfg, sess, apply.PlanOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		l.t.Fatalf("plan errors: %v", p.Errors)
	}
	out := map[string]diff.TablePlan{}
	for _, tp := range p.Tables {
		out[tp.Address] = tp
	}
	return out
}

func compactOf(tp diff.TablePlan) *diff.CompactAction {
	for _, a := range tp.Actions {
		if a.Compact != nil {
			return a.Compact
		}
	}
	return nil
}

// TestReconcileBudget: the fleet's byte budget per interval lets one of
// two equal compactions run and defers the other (its table keeps its
// other actions), said in /status and counted.
func TestReconcileBudget(t *testing.T) {
	l := newLake(t)
	l.table("a", 3)
	l.table("b", 3)
	plans := l.planned()
	c, other := compactOf(plans["lake.sales.a"]), compactOf(plans["lake.sales.b"])
	if c == nil || other == nil || other.InputBytes != c.InputBytes {
		t.Fatal("setup: want two equal compactions")
	}
	r := reconcile.New(l.load, open, reconcile.Options{Once: true, Parallelism: 1, BytesPerInterval: c.InputBytes + c.InputBytes/2})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r)
	compacted := 0
	for _, name := range []string{"lake.sales.a", "lake.sales.b"} {
		switch s := st[name]; {
		case s.Result == reconcile.ResultApplied:
			compacted++
		case s.Result == reconcile.ResultSkipped && strings.Contains(s.Error, "waits for the next interval"):
		default:
			t.Errorf("%s: %+v", name, s)
		}
	}
	if compacted != 1 {
		t.Errorf("%d tables compacted within a budget of one and a half, want 1", compacted)
	}
	if got := l.actions(); got["lake.sales.a"]+got["lake.sales.b"] != 1 {
		t.Errorf("after the pass: %v, want one compaction left for the next interval", got)
	}
	_, body := scrape(t, r.Handler(), "/metrics")
	if got := metric(t, body, `icewright_actions_total{action="compact",outcome="skipped",reason="budget"}`); got != "1" {
		t.Errorf("budget skips %q, want 1", got)
	}
}

// TestReconcileMaxDeletes: an expiry that would delete more files than
// -max-deletes is held for review (the table's snapshots stay), said in
// /status and counted; the table's other actions run.
func TestReconcileMaxDeletes(t *testing.T) {
	l := newLake(t)
	old := l.table("old", 4)
	old = l.lake.Backdate(t, old, 10*24*time.Hour)
	testkit.Append(t, old, 1, 20, 1)
	if err := os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(l.lake.HCL()+retentionHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, a := range l.planned()["lake.sales.old"].Actions {
		if a.Expire != nil {
			n = a.Expire.FilesToDelete
		}
	}
	if n < 2 {
		t.Fatalf("setup: the expiry deletes %d files, want at least 2", n)
	}
	snaps := len(l.lake.Reload(t, "sales.old").Metadata().Snapshots())
	r := reconcile.New(l.load, open, reconcile.Options{Once: true, MaxDeletes: n - 1})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := statusOf(t, r)["lake.sales.old"]
	if s.Result != reconcile.ResultApplied || !strings.Contains(s.Error, "expire_snapshots would delete") || !strings.Contains(s.Error, "held for review") {
		t.Errorf("status %+v: want the compaction applied and the expiry held", s)
	}
	after := l.lake.Reload(t, "sales.old").Metadata().Snapshots()
	if len(after) < snaps {
		t.Errorf("the held expiry ran: %d snapshots, was %d", len(after), snaps)
	}
	_, body := scrape(t, r.Handler(), "/metrics")
	if got := metric(t, body, `icewright_actions_total{action="expire_snapshots",outcome="skipped",reason="max_deletes"}`); got != "1" {
		t.Errorf("max_deletes skips %q, want 1", got)
	}
}

// TestReconcileMinInterval: a kind that ran on a table less than its
// minimum interval ago is left out of the table's next apply, however soon
// that comes (here a writer's trigger), and said in /status.
func TestReconcileMinInterval(t *testing.T) {
	l := newLake(t)
	l.table("events", 3)
	r := reconcile.New(l.load, open, reconcile.Options{Interval: time.Hour, Jitter: -1, Debounce: 10 * time.Millisecond,
		MinIntervals: map[diff.ActionType]time.Duration{diff.Compact: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the first compaction", func() bool {
		return statusOf(t, r)["lake.sales.events"].Result == reconcile.ResultApplied
	})
	if st := statusOf(t, r)["lake.sales.events"]; st.LastDone[diff.Compact].IsZero() {
		t.Fatalf("no last run recorded: %+v", st)
	}
	testkit.Append(t, l.lake.Reload(t, "sales.events"), 3, 20, 1)
	after := l.lake.Reload(t, "sales.events").MetadataLocation()
	if !r.Trigger("lake.sales.events") {
		t.Fatal("trigger refused")
	}
	waitFor(t, "the held compaction", func() bool {
		return strings.Contains(statusOf(t, r)["lake.sales.events"].Error, "waits for its minimum interval of 1h0m0s")
	})
	if got := l.lake.Reload(t, "sales.events").MetadataLocation(); got != after {
		t.Errorf("the table was changed within the minimum interval")
	}
	_, body := scrape(t, r.Handler(), "/metrics")
	if got := metric(t, body, `icewright_actions_total{action="compact",outcome="skipped",reason="min_interval"}`); got != "1" {
		t.Errorf("min_interval skips %q, want 1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
