package views

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iceops/iceops/apply"
	"github.com/iceops/iceops/diff"
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

Apply finished with errors: 1 table changed; 1 failed; 2 actions done, 1 skipped, 1 failed; 214 snapshots expired, 900 files deleted, 1.0 GiB freed.
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
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
	p := NewProgress(&buf, false, false, NewStyles(false), time.Now)
	var wg sync.WaitGroup
	// Events come from many goroutines; lines must never interleave.
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseStart})
			p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: int64(i), Total: 20, Unit: "files"})
			p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseDone})
		}()
	}
	wg.Wait()
	p.Event(apply.Event{Table: "lake.a.u", Action: "expire_snapshots", Phase: apply.PhaseFailed, Err: errors.New("boom")})
	p.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 41 {
		t.Fatalf("%d lines, want 41 (no counter lines when not live):\n%s", len(lines), buf.String())
	}
	for _, l := range lines[:40] {
		if l != "lake.a.t: compact started" && l != "lake.a.t: compact done" {
			t.Errorf("unexpected line %q", l)
		}
	}
	if lines[40] != "lake.a.u: expire_snapshots failed: boom" {
		t.Errorf("last line %q", lines[40])
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
	// Second draw moves up one line (one table), third moves up two.
	if !strings.Contains(out, "\x1b[1A") || !strings.Contains(out, "\x1b[2A") {
		t.Errorf("lines not redrawn in place:\n%q", out)
	}
	p.Done()
	if !strings.HasSuffix(buf.String(), "\x1b[2A\x1b[J") {
		t.Errorf("live lines not cleared at the end:\n%q", buf.String())
	}
}
