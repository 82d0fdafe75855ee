package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
)

func sampleResults() *apply.Results {
	return &apply.Results{
		FormatVersion: apply.ResultsFormatVersion,
		Tables: []apply.TableResult{
			{Address: "lake.a.events", Status: apply.StatusDone, Actions: []apply.ActionResult{
				{Type: diff.Compact, Status: apply.StatusDone, FilesBefore: 1203, FilesAfter: 7, BytesBefore: 3328599345, BytesAfter: 3300000000, DurationMs: 2300},
				{Type: diff.ExpireSnapshots, Destructive: true, Status: apply.StatusDone, SnapshotsExpired: 214, FilesDeleted: 900, BytesFreed: 1 << 30, DurationMs: 450},
				{Type: diff.RemoveOrphanFiles, Destructive: true, Status: apply.StatusSkipped, Reason: "table changed since the plan; no listed path still qualifies"},
			}},
			{Address: "lake.a.broken", Status: apply.StatusFailed, Error: "commit: conflict after 4 retries", Actions: []apply.ActionResult{
				{Type: diff.UpdateProperties, Status: apply.StatusFailed, Error: "commit: conflict after 4 retries", DurationMs: 80},
			}},
			{Address: "lake.a.users", Status: apply.StatusInPolicy},
		},
		Summary: apply.ResultSummary{Tables: 3, TablesChanged: 1, TablesFailed: 1, ActionsDone: 2, ActionsSkipped: 1, ActionsFailed: 1,
			FilesDeleted: 900, BytesFreed: 1 << 30, Snapshots: 214},
	}
}

func TestResultsTable(t *testing.T) {
	var buf bytes.Buffer
	if err := Results(&buf, sampleResults(), NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `TABLE          ACTION               STATUS     FILES       BYTES               SNAPSHOTS  DELETED  FREED    TIME
lake.a.events  compact              done       1,203 -> 7  3.1 GiB -> 3.1 GiB                               2.3s
lake.a.events  expire_snapshots     done                                       214        900      1.0 GiB  450ms
lake.a.events  remove_orphan_files  skipped                                                                        table changed since the plan; no listed path still qualifies
lake.a.broken  update_properties    failed                                                                  80ms   commit: conflict after 4 retries
lake.a.users   -                    in policy

Apply finished with errors: tables: 1 changed, 1 failed; actions: 2 done, 1 skipped, 1 failed; 214 snapshots expired, 900 files deleted, 1.0 GiB freed.
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestResultsNameEveryFile: an action that did not finish its files has
// every file named with its place, in the text as in the JSON.
func TestResultsNameEveryFile(t *testing.T) {
	r := sampleResults()
	r.Tables[0].Actions[2] = apply.ActionResult{Type: diff.RemoveOrphanFiles, Destructive: true, Status: apply.StatusFailed,
		Error: "incomplete", FilesQuarantined: 1, FilesNotMoved: 1, FilesPlaceUnknown: 1,
		FilesMoved: []string{"s3://b/t/data/a -> s3://b/t/.icewright-quarantine/r/data/a"},
		DeleteErrors: []string{"s3://b/t/data/b: not quarantined, still in place: not started: storage judged unresponsive",
			"s3://b/t/data/c: place unknown: copied into the quarantine; the delete of the original got no answer"}}
	var buf bytes.Buffer
	if err := Results(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `
lake.a.events remove_orphan_files: where each file is
  moved: s3://b/t/data/a -> s3://b/t/.icewright-quarantine/r/data/a
  s3://b/t/data/b: not quarantined, still in place: not started: storage judged unresponsive
  s3://b/t/data/c: place unknown: copied into the quarantine; the delete of the original got no answer
`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("got\n%s\nwant it to contain\n%s", buf.String(), want)
	}
}

func TestResultsInterrupted(t *testing.T) {
	r := sampleResults()
	r.Interrupted = true
	var buf bytes.Buffer
	if err := Results(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Apply interrupted:") {
		t.Errorf("interruption not reported:\n%s", buf.String())
	}
}

func TestProgressLogLines(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := NewProgress(&buf, false, false, NewStyles(false), clock)
	var wg sync.WaitGroup
	// Events come from many goroutines; lines must never interleave.
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl := fmt.Sprintf("lake.a.t%02d", i)
			p.Event(apply.Event{Table: tbl, Action: "compact", Phase: apply.PhaseStart})
			p.Event(apply.Event{Table: tbl, Action: "compact", Phase: apply.PhaseProgress, Done: 20, Total: 20, Unit: "files"})
			p.Event(apply.Event{Table: tbl, Action: "compact", Phase: apply.PhaseDone})
		}()
	}
	wg.Wait()
	p.Event(apply.Event{Table: "lake.a.u", Action: "expire_snapshots", Phase: apply.PhaseStart})
	mu.Lock()
	now = now.Add(2500 * time.Millisecond)
	mu.Unlock()
	p.Event(apply.Event{Table: "lake.a.u", Action: "expire_snapshots", Phase: apply.PhaseFailed, Err: errors.New("boom")})
	p.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 42 {
		t.Fatalf("%d lines, want 42 (no counter lines when not live):\n%s", len(lines), buf.String())
	}
	line := regexp.MustCompile(`^2026-11-30T11:00:00Z lake\.a\.t\d\d: compact (started|done \(20 of 20 files\) in 0s)$`)
	for _, l := range lines[:40] {
		if !line.MatchString(l) {
			t.Errorf("unexpected line %q", l)
		}
	}
	if want := "2026-11-30T11:00:02Z lake.a.u: expire_snapshots failed in 2.5s: boom"; lines[41] != want {
		t.Errorf("last line %q, want %q", lines[41], want)
	}
}

func TestProgressHeartbeat(t *testing.T) {
	var buf testenv.SyncBuffer
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := NewProgress(&buf, false, false, NewStyles(false), clock)
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseStart})
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: 1 << 30, Total: 3 << 30, Unit: "bytes"})
	mu.Lock()
	now = start.Add(95 * time.Second)
	mu.Unlock()
	p.Heartbeat(5 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	want := "2026-11-30T12:01:35Z lake.a.t: compact running: 1.0 GiB of 3.0 GiB (1m35s so far)"
	for !strings.Contains(buf.String(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseDone})
	p.Done()
	out := buf.String()
	if !strings.Contains(out, want) {
		t.Fatalf("no heartbeat line %q:\n%s", want, out)
	}
	// After the action ends and Done, no more beats.
	n := len(out)
	time.Sleep(30 * time.Millisecond)
	if buf.Len() != n {
		t.Errorf("heartbeat after Done:\n%s", buf.String())
	}
}

func TestProgressInterrupted(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := NewProgress(&buf, false, false, NewStyles(false), func() time.Time { return now })
	p.Event(apply.Event{Table: "lake.a.t", Action: "expire_snapshots", Phase: apply.PhaseStart})
	p.Interrupted("SIGTERM")
	want := "2026-11-30T12:00:00Z SIGTERM received: no new action starts; finishing lake.a.t: expire_snapshots. Results follow.\n"
	if !strings.HasSuffix(buf.String(), want) {
		t.Errorf("got %q, want suffix %q", buf.String(), want)
	}
}

// TestProgressLiveBounded: on a terminal the live area is one line per
// running table plus a summary line, however many tables the run has.
func TestProgressLiveBounded(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := NewProgress(&buf, true, false, NewStyles(false), func() time.Time { return now })
	maxDrawn := 0
	for i := range 40 {
		// Two tables run at once.
		for _, tbl := range []string{fmt.Sprintf("lake.a.t%02d", i), fmt.Sprintf("lake.b.t%02d", i)} {
			p.Event(apply.Event{Table: tbl, Action: "compact", Phase: apply.PhaseStart})
			maxDrawn = max(maxDrawn, p.drawn)
		}
		for _, tbl := range []string{fmt.Sprintf("lake.a.t%02d", i), fmt.Sprintf("lake.b.t%02d", i)} {
			p.Event(apply.Event{Table: tbl, Action: "compact", Phase: apply.PhaseDone})
			p.Event(apply.Event{Table: tbl, Phase: apply.PhaseFinished, Total: 80, Unit: "tables"})
		}
	}
	if maxDrawn != 3 {
		t.Errorf("live area was up to %d lines, want 3 (2 running tables + summary)", maxDrawn)
	}
	out := buf.String()
	if !strings.Contains(out, "80 of 80 tables finished") {
		t.Errorf("no summary line:\n%q", out[max(0, len(out)-300):])
	}
	p.Done()
	if !strings.HasSuffix(buf.String(), "\x1b[1A\x1b[J") {
		t.Errorf("live lines not cleared at the end:\n%q", buf.String()[max(0, buf.Len()-100):])
	}
}

func TestProgressQuietPlan(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, false, true, NewStyles(false), time.Now)
	p.Event(apply.Event{Table: "lake.a.t", Phase: apply.PhaseObserve})
	p.Event(apply.Event{Table: "lake.a.t", Phase: apply.PhasePlanned})
	p.Done()
	if buf.Len() != 0 {
		t.Errorf("plan progress in a log: %q", buf.String())
	}
}

func TestProgressLiveRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := NewProgress(&buf, true, false, NewStyles(false), func() time.Time { return now })
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseStart})
	p.Event(apply.Event{Table: "lake.a.u", Action: "expire_snapshots", Phase: apply.PhaseStart})
	now = now.Add(time.Second)
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: 1 << 20, Total: 4 << 20, Unit: "bytes"})
	// A counter update within the redraw interval is not drawn.
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: 2 << 20, Total: 4 << 20, Unit: "bytes"})
	out := buf.String()
	if !strings.Contains(out, "lake.a.t: compact 1.0 MiB of 4.0 MiB") {
		t.Errorf("no live byte counter:\n%q", out)
	}
	if strings.Contains(out, "2.0 MiB of 4.0 MiB") {
		t.Errorf("redraw not throttled:\n%q", out)
	}
	// Second draw moves up two lines (one table and the summary), third
	// moves up three.
	if !strings.Contains(out, "\x1b[2A") || !strings.Contains(out, "\x1b[3A") {
		t.Errorf("lines not redrawn in place:\n%q", out)
	}
	p.Done()
	if !strings.HasSuffix(buf.String(), "\x1b[3A\x1b[J") {
		t.Errorf("live lines not cleared at the end:\n%q", buf.String())
	}
}

// TestResultsDelegatedPartitions: each partition an action delegated to an
// engine has a line of its own under the action (not one long cell), and
// a failure is said once: on its partition's line, not again in the
// action's note or as the table's error (issue 43, item 6).
func TestResultsDelegatedPartitions(t *testing.T) {
	boom := "spark: [TABLE_OR_VIEW_NOT_FOUND] The table `lake`.`a`.`events` cannot be found. SQLSTATE: 42P01"
	actErr := "compaction of partition day=2026-06-14 by spark: " + boom
	r := &apply.Results{Tables: []apply.TableResult{{Address: "lake.a.events", Status: apply.StatusFailed, Error: "compact: " + actErr,
		Actions: []apply.ActionResult{{Type: diff.Compact, Status: apply.StatusFailed, Error: actErr, Committed: true,
			Reason: `3 partitions by engine "spark": 1 done, 1 skipped, 1 failed`, FilesBefore: 240, FilesAfter: 240, DurationMs: 2300,
			Partitions: []diff.PartitionOutcome{
				{Partition: "day=2026-06-13", Engine: "spark", Status: diff.PartitionDone, Snapshot: 7, Rows: 60, Detail: "rewritten_data_files_count=60, added_data_files_count=1; snapshot 7 checked, 60 rows unchanged"},
				{Partition: "day=2026-06-14", Engine: "spark", Status: diff.PartitionFailed, Error: boom},
				{Partition: "day=2026-06-15", Engine: "spark", Status: diff.PartitionSkipped, Detail: "not run: an earlier partition failed"},
			}}}}},
		Summary: apply.ResultSummary{Tables: 1, TablesChanged: 1, TablesFailed: 1, ActionsFailed: 1}}
	var buf bytes.Buffer
	if err := Results(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `TABLE          ACTION   STATUS  FILES  BYTES  SNAPSHOTS  DELETED  FREED  TIME
lake.a.events  compact  failed  240                                      2.3s  3 partitions by engine "spark": 1 done, 1 skipped, 1 failed
                 partition day=2026-06-13 by engine "spark": done: rewritten_data_files_count=60, added_data_files_count=1; snapshot 7 checked, 60 rows unchanged
                 partition day=2026-06-14 by engine "spark": failed: ` + boom + `
                 partition day=2026-06-15 by engine "spark": skipped: not run: an earlier partition failed

Apply finished with errors: tables: 1 changed, 1 failed; actions: 0 done, 0 skipped, 1 failed.
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if n := strings.Count(buf.String(), "TABLE_OR_VIEW_NOT_FOUND"); n != 1 {
		t.Errorf("the failure is said %d times", n)
	}
	buf.Reset()
	if err := ResultsJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	buf = doc
	for _, want := range []string{
		`"partitions":[{"partition":"day=2026-06-13","engine":"spark","status":"done","snapshot_id":7,"rows":60,"detail":`,
		`{"partition":"day=2026-06-14","engine":"spark","status":"failed","error":`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("apply -json lacks %s:\n%s", want, buf.String())
		}
	}
}

// TestResultsRefusedTableIsChanged: a table whose actions ran while the
// plan refused one partition is counted changed, not failed; the refusal
// is a line of its own under it, and the summary says the apply has
// refusals (it exits 1) rather than errors (issue 43, item 6).
func TestResultsRefusedTableIsChanged(t *testing.T) {
	why := `partition id_bucket=3 (16 files, 40.0 KiB) goes to engine "spark", which cannot be bounded to exactly this partition: bucket; it is not compacted`
	r := &apply.Results{Tables: []apply.TableResult{{Address: "lake.a.events", Status: apply.StatusDone,
		PlannedRefusals: []diff.Refusal{{Action: "compact", Reason: why}},
		Actions:         []apply.ActionResult{{Type: diff.Compact, Status: apply.StatusDone, Committed: true, FilesBefore: 40, FilesAfter: 25, DurationMs: 1200}}}}}
	r.Summary = apply.ResultSummary{Tables: 1, TablesChanged: 1, TablesRefused: 1, ActionsDone: 1}
	var buf bytes.Buffer
	if err := Results(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `TABLE          ACTION   STATUS  FILES     BYTES  SNAPSHOTS  DELETED  FREED  TIME
lake.a.events  compact  done    40 -> 25                                    1.2s
                 refused in the plan: compact: ` + why + `

Apply finished with refusals: tables: 1 changed, 0 failed, 1 with refusals; actions: 1 done, 0 skipped, 0 failed.
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !r.Failed() || r.HasFailure() {
		t.Errorf("Failed %v, HasFailure %v: a refusal exits 1 and is no failure", r.Failed(), r.HasFailure())
	}
}

// TestResultsActualLine: an action that was counted has one line of its
// actual, with the plan's estimate beside it, "~" on apportioned CPU;
// JSON has both objects.
func TestResultsActualLine(t *testing.T) {
	r := sampleResults()
	a := &r.Tables[0].Actions[0]
	a.Actual = &diff.Usage{Requests: diff.Requests{Get: 1210, Put: 9}, BytesRead: 3328599345, BytesWritten: 3300000000, CPUSeconds: 41.234}
	a.Estimate = &diff.Usage{Requests: diff.Requests{Get: 1203, Put: 8}, BytesRead: 3328599345, BytesWritten: 3328599345, CPUSeconds: 38}
	e := &r.Tables[0].Actions[1]
	e.Actual, e.ActualCPUApproximate = &diff.Usage{Requests: diff.Requests{BatchDelete: 1}, FilesDeleted: 900, CPUSeconds: 0.5}, true
	var buf bytes.Buffer
	if err := Results(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n                 actual: 1,219 requests, 3.1 GiB read, 3.1 GiB written, 41.23s CPU (estimate: 1,211, 3.1 GiB, 3.1 GiB, 38.00s)\n",
		"\n                 actual: 1 request, 0 B read, 0 B written, ~0.50s CPU\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no line %q in\n%s", want, buf.String())
		}
	}
	if strings.Count(buf.String(), "actual:") != 2 {
		t.Errorf("an action without an actual has a line:\n%s", buf.String())
	}
	buf.Reset()
	if err := ResultsJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tables []struct {
			Actions []map[string]json.RawMessage `json:"actions"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Tables[0].Actions
	var est, act diff.Usage
	if err := errors.Join(json.Unmarshal(got[0]["estimate"], &est), json.Unmarshal(got[0]["actual"], &act)); err != nil || est != *a.Estimate || act != *a.Actual {
		t.Errorf("JSON estimate %s, actual %s (%v)", got[0]["estimate"], got[0]["actual"], err)
	}
	if string(got[1]["actual_cpu_approximate"]) != "true" || got[1]["estimate"] != nil || got[2]["actual"] != nil {
		t.Errorf("JSON: %v", got)
	}
}
