package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/apply"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// plan without a terminal: a line per catalog connected and table
// observed, and the heartbeat names what is still waited on.
func TestProgressPlanLog(t *testing.T) {
	clk := &fakeClock{time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := NewProgress(&buf, false, false, NewStyles(false), clk.now)
	p.Event(apply.Event{Catalog: "lake", Phase: apply.PhaseConnect})
	clk.advance(10 * time.Second)
	p.beat()
	p.Event(apply.Event{Catalog: "lake", Phase: apply.PhaseConnected, Done: 2, Unit: "tables"})
	p.Event(apply.Event{Table: "lake.a.t", Phase: apply.PhaseObserve, Total: 2, Unit: "tables"})
	p.Event(apply.Event{Table: "lake.a.u", Phase: apply.PhaseObserve, Total: 2, Unit: "tables"})
	clk.advance(250 * time.Millisecond)
	p.Event(apply.Event{Table: "lake.a.t", Phase: apply.PhasePlanned})
	clk.advance(10 * time.Second)
	p.beat()
	p.Event(apply.Event{Table: "lake.a.u", Phase: apply.PhasePlanned, Err: errors.New("boom")})
	p.Event(apply.Event{Catalog: "slow", Phase: apply.PhaseConnect})
	clk.advance(time.Minute)
	p.Event(apply.Event{Catalog: "slow", Phase: apply.PhaseConnected, Err: errors.New("timeout")})
	want := "2026-06-15T12:00:10Z catalog lake: waiting for the catalog to answer (10s so far)\n" +
		"2026-06-15T12:00:10Z catalog lake connected: 2 tables listed in 10s\n" +
		"2026-06-15T12:00:10Z lake.a.t: observed in 250ms\n" +
		"2026-06-15T12:00:20Z lake.a.u: observing (10.3s so far)\n" +
		"2026-06-15T12:00:20Z lake.a.u: could not be planned\n" +
		"2026-06-15T12:01:20Z catalog slow: not reachable after 1m00s\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// apply -json: one object per event, counters at most once a second per
// table, errors at level error.
func TestProgressJSONLines(t *testing.T) {
	clk := &fakeClock{time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := NewJSONProgress(&buf, clk.now)
	p.Version("0.1.0")
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseStart})
	for i := range 5 {
		clk.advance(300 * time.Millisecond)
		p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: int64(i + 1), Total: 5, Unit: "files"})
	}
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseFailed, Err: errors.New("disk full")})
	var types, levels []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		types = append(types, e["type"].(string))
		levels = append(levels, e["level"].(string))
	}
	if got := strings.Join(types, " "); got != "version action_start action_progress action_progress action_failed" {
		t.Errorf("types = %s\n%s", got, buf.String())
	}
	if levels[len(levels)-1] != "error" || !strings.Contains(buf.String(), `"message":"lake.a.t: compact failed in 1.5s: disk full"`) {
		t.Errorf("last event:\n%s", buf.String())
	}
}

// apply -json reads right in a pipeline (issue 43): a counter at 0 keeps
// "done": 0, a catalog that could not be listed is catalog_failed (not
// catalog_connected at level error), and the results line has a type.
func TestProgressJSONEdges(t *testing.T) {
	clk := &fakeClock{time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := NewJSONProgress(&buf, clk.now)
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseStart})
	clk.advance(2 * time.Second)
	p.Event(apply.Event{Table: "lake.a.t", Action: "compact", Phase: apply.PhaseProgress, Done: 0, Total: 5, Unit: "files"})
	p.Event(apply.Event{Catalog: "down", Phase: apply.PhaseConnect})
	p.Event(apply.Event{Catalog: "down", Phase: apply.PhaseConnected, Err: errors.New("connection refused")})
	if err := ResultsJSONLine(&buf, &apply.Results{FormatVersion: "1.0"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var events []map[string]any
	for _, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		events = append(events, e)
	}
	if d, ok := events[1]["done"]; events[1]["type"] != "action_progress" || !ok || d != float64(0) {
		t.Errorf("a progress event at 0 lost done: %s", lines[1])
	}
	if _, ok := events[0]["done"]; ok {
		t.Errorf("action_start has a done: %s", lines[0])
	}
	if events[3]["type"] != "catalog_failed" || events[3]["level"] != "error" || events[3]["error"] != "connection refused" {
		t.Errorf("an unreachable catalog: %s", lines[3])
	}
	last := events[len(events)-1]
	if last["type"] != "results" || last["format_version"] != "1.0" || !strings.HasPrefix(lines[len(lines)-1], `{"type":"results",`) {
		t.Errorf("the results line: %s", lines[len(lines)-1])
	}
}
