package views

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/icewright/icewright/apply"
)

// Progress renders apply.Events on stderr. On a terminal it keeps one live
// line per running table and one summary line below them, redrawn in place,
// so the area never grows with the number of tables. Otherwise (a CI log,
// TERM=dumb) it writes one timestamped line per action event, and a
// heartbeat line per running action every HeartbeatEvery, so a long
// compaction is visibly alive. Events arrive from many goroutines; a mutex
// serialises them.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	quiet bool // plan: nothing unless live
	s     *Styles
	now   func() time.Time

	running  map[string]*runState // by table
	finished int
	failed   int
	total    int64 // tables expected, from the events' Total (0: unknown)
	verb     string
	drawn    int
	lastDraw time.Time

	stop chan struct{}
	wg   sync.WaitGroup

	// json writes one JSON object per event (JSON lines) instead of text.
	json bool
}

// runState is what a running table is doing, for its live line, the
// heartbeat and the duration of the done line.
type runState struct {
	line    string
	action  string
	started time.Time // of the current action, observation or listing
	done    int64
	total   int64
	unit    string
	// waiting is what a table or catalog with no action is doing, for
	// the heartbeat: "observing", "waiting for the catalog to answer".
	waiting string
	// emitted is when a JSON progress event was last written.
	emitted time.Time
}

// redrawEvery bounds how often live lines are repainted: byte counters
// can fire thousands of times a second.
const redrawEvery = 100 * time.Millisecond

// HeartbeatEvery is the log mode's heartbeat interval.
const HeartbeatEvery = 30 * time.Second

// PlanHeartbeatEvery is plan's: observing a table takes seconds, so a
// catalog or table still busy after 10 s is worth a line.
const PlanHeartbeatEvery = 10 * time.Second

// jsonProgressEvery bounds JSON progress events per table: a counter of
// bytes fires thousands of times a second.
const jsonProgressEvery = time.Second

// NewProgress returns a renderer. live selects the terminal mode; quiet
// suppresses log lines when not live (plan's observation events are
// noise in a CI log, and its result is the plan itself).
func NewProgress(w io.Writer, live, quiet bool, s *Styles, now func() time.Time) *Progress {
	return &Progress{w: w, live: live, quiet: quiet, s: s, now: now, running: map[string]*runState{}}
}

// NewJSONProgress returns a renderer that writes each event as one JSON
// object on its own line (apply -json's stream, as Terraform's
// machine-readable UI): type, timestamp, message, and the table, action
// and counters the event has.
func NewJSONProgress(w io.Writer, now func() time.Time) *Progress {
	return &Progress{w: w, json: true, s: NewStyles(false), now: now, running: map[string]*runState{}}
}

// Heartbeat starts the log mode's heartbeat: every interval, a line per
// running action with how far it is and for how long it has run. Done
// stops it. It does nothing on a terminal (the live lines show the same)
// or in quiet mode.
func (p *Progress) Heartbeat(every time.Duration) {
	if p.live || p.quiet || p.json || every <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		return
	}
	stop := make(chan struct{})
	p.stop = stop
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop: // a local: Done clears p.stop before closing it
				return
			case <-t.C:
				p.beat()
			}
		}
	}()
}

func (p *Progress) beat() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.runningTables() {
		st := p.running[t]
		if st.action == "" {
			if st.waiting != "" {
				p.log(fmt.Sprintf("%s: %s (%s so far)", t, st.waiting, elapsed(p.now().Sub(st.started))))
			}
			continue
		}
		line := fmt.Sprintf("%s: %s running", t, st.action)
		if st.total > 0 || st.done > 0 {
			line += ": " + amount(apply.Event{Done: st.done, Total: st.total, Unit: st.unit})
		}
		line += fmt.Sprintf(" (%s so far)", elapsed(p.now().Sub(st.started)))
		p.log(line)
	}
}

// Interrupted acknowledges SIGINT or SIGTERM: it says that no new action
// starts and which actions are being finished.
func (p *Progress) Interrupted(signal string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var busy []string
	for _, t := range p.runningTables() {
		if a := p.running[t].action; a != "" {
			busy = append(busy, t+": "+a)
		}
	}
	msg := fmt.Sprintf("%s received: no new action starts", signal)
	if len(busy) > 0 {
		msg += "; finishing " + strings.Join(busy, ", ")
	}
	msg += ". Results follow."
	if p.json {
		p.writeJSON(jsonEvent{Type: "interrupted", Level: "warn", Message: msg})
		return
	}
	if p.live {
		p.clear()
		fmt.Fprintln(p.w, msg)
		p.draw()
		return
	}
	p.log(msg)
}

// Event is the hook given to apply.PlanOptions.Progress and
// apply.ApplyOptions.Progress.
func (p *Progress) Event(e apply.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.jsonEvent(e)
		return
	}
	line := p.track(e)
	if p.live {
		// Redraw on every state change, but throttle pure counter updates.
		if e.Phase == apply.PhaseProgress && p.now().Sub(p.lastDraw) < redrawEvery {
			return
		}
		p.draw()
		return
	}
	if p.quiet || line == "" {
		return
	}
	p.log(line)
}

// track updates the running state and returns the log line of e, if any.
func (p *Progress) track(e apply.Event) string {
	if e.Unit == "tables" && e.Total > 0 {
		p.total = e.Total
	}
	if e.Catalog != "" {
		return p.trackCatalog(e)
	}
	st := p.running[e.Table]
	if st == nil && e.Table != "" && e.Phase != apply.PhaseFinished && e.Phase != apply.PhasePlanned {
		st = &runState{}
		p.running[e.Table] = st
	}
	var line string
	switch e.Phase {
	case apply.PhaseObserve:
		p.verb = "planned"
		st.started, st.waiting = p.now(), "observing"
	case apply.PhaseStart:
		p.verb = "finished"
		st.action, st.started, st.done, st.total, st.unit = e.Action, p.now(), 0, 0, ""
		line = fmt.Sprintf("%s: %s started", e.Table, e.Action)
	case apply.PhaseProgress:
		if st.action == e.Action {
			st.done, st.total, st.unit = e.Done, e.Total, e.Unit
		}
	case apply.PhaseDone, apply.PhaseSkipped, apply.PhaseFailed:
		line = p.endLine(e, st)
		st.action = ""
	case apply.PhaseLockWait:
		line = fmt.Sprintf("%s: %v", e.Table, e.Err)
	case apply.PhaseRetry:
		line = fmt.Sprintf("%s: commit conflict, re-planning", e.Table)
		if e.Err != nil {
			line += ": " + e.Err.Error()
		}
	case apply.PhasePlanned, apply.PhaseFinished:
		if st := p.running[e.Table]; st != nil && e.Phase == apply.PhasePlanned && !st.started.IsZero() {
			line = fmt.Sprintf("%s: observed in %s", e.Table, elapsed(p.now().Sub(st.started)))
		}
		delete(p.running, e.Table)
		p.finished++
		if e.Err != nil {
			p.failed++
			if e.Phase == apply.PhasePlanned {
				line = fmt.Sprintf("%s: could not be planned", e.Table) // the error follows the plan, once
			}
		}
		return line
	}
	if st != nil {
		st.line = p.statusLine(e, st)
	}
	return line
}

// trackCatalog follows a catalog's listing: while it waits, the
// heartbeat names it; its end says how long the first answer took.
func (p *Progress) trackCatalog(e apply.Event) string {
	key := "catalog " + e.Catalog
	switch e.Phase {
	case apply.PhaseConnect:
		p.running[key] = &runState{started: p.now(), waiting: "waiting for the catalog to answer",
			line: fmt.Sprintf("%s %s: connecting…", p.s.Dim("·"), key)}
		return ""
	case apply.PhaseConnected:
		var took string
		if st := p.running[key]; st != nil {
			took = elapsed(p.now().Sub(st.started))
		}
		delete(p.running, key)
		if e.Err != nil {
			// The error itself is PlanProblems' to print, once.
			return fmt.Sprintf("%s: not reachable after %s", key, took)
		}
		return fmt.Sprintf("%s connected: %s listed in %s", key, countOf(e.Done, "table", "tables"), took)
	}
	return ""
}

// endLine is the log line of an action's end: its last counter and how
// long it took.
func (p *Progress) endLine(e apply.Event, st *runState) string {
	var dur string
	if st != nil && st.action == e.Action && !st.started.IsZero() {
		dur = " in " + elapsed(p.now().Sub(st.started))
	}
	switch e.Phase {
	case apply.PhaseDone:
		line := fmt.Sprintf("%s: %s done", e.Table, e.Action)
		if st != nil && st.action == e.Action && (st.total > 0 || st.done > 0) {
			line += " (" + amount(apply.Event{Done: st.done, Total: st.total, Unit: st.unit}) + ")"
		}
		return line + dur
	case apply.PhaseSkipped:
		if e.Err != nil {
			return fmt.Sprintf("%s: %s skipped: %v", e.Table, e.Action, e.Err)
		}
		return fmt.Sprintf("%s: %s skipped", e.Table, e.Action)
	default:
		return fmt.Sprintf("%s: %s failed%s: %v", e.Table, e.Action, dur, e.Err)
	}
}

// log writes one timestamped line (RFC 3339, UTC).
func (p *Progress) log(line string) {
	fmt.Fprintf(p.w, "%s %s\n", p.now().UTC().Format(time.RFC3339), line)
}

// Done stops the heartbeat and clears the live lines so the results that
// follow start clean.
func (p *Progress) Done() {
	p.mu.Lock()
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		p.wg.Wait()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.clear()
	}
}

func (p *Progress) runningTables() []string {
	out := make([]string, 0, len(p.running))
	for t := range p.running {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// clear erases the live area.
func (p *Progress) clear() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// draw repaints the live area: one line per running table, then the
// summary line.
func (p *Progress) draw() {
	p.lastDraw = p.now()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	n := 0
	for _, t := range p.runningTables() {
		fmt.Fprintf(&b, "\x1b[2K%s\n", p.running[t].line)
		n++
	}
	fmt.Fprintf(&b, "\x1b[2K%s\n", p.summaryLine())
	n++
	// Lines left over from a taller area are erased.
	b.WriteString("\x1b[J")
	p.drawn = n
	io.WriteString(p.w, b.String())
}

func (p *Progress) summaryLine() string {
	verb := p.verb
	if verb == "" {
		verb = "finished"
	}
	line := fmt.Sprintf("%s %s", Count(p.finished), plural(p.finished, "table", "tables"))
	if p.total > 0 {
		line = fmt.Sprintf("%s of %s", Count(p.finished), countOf(p.total, "table", "tables"))
	}
	line += " " + verb
	if len(p.running) > 0 {
		line += fmt.Sprintf(", %s running", Count(len(p.running)))
	}
	if p.failed > 0 {
		line += fmt.Sprintf(", %s failed", Count(p.failed))
	}
	return p.s.Dim(line)
}

func (p *Progress) statusLine(e apply.Event, st *runState) string {
	s := p.s
	what := e.Action
	if what == "" {
		what = "table"
	}
	switch e.Phase {
	case apply.PhaseObserve:
		return fmt.Sprintf("%s %s: observing…", s.Dim("·"), e.Table)
	case apply.PhaseStart:
		return fmt.Sprintf("%s %s: %s…", s.Change("~"), e.Table, what)
	case apply.PhaseProgress:
		return fmt.Sprintf("%s %s: %s %s", s.Change("~"), e.Table, what, amount(e))
	case apply.PhaseLockWait:
		return fmt.Sprintf("%s %s: %v", s.Warn("…"), e.Table, e.Err)
	case apply.PhaseRetry:
		return fmt.Sprintf("%s %s: commit conflict, re-planning…", s.Warn("↻"), e.Table)
	case apply.PhaseDone:
		return fmt.Sprintf("%s %s: %s done", s.OK("✓"), e.Table, what)
	case apply.PhaseSkipped:
		return fmt.Sprintf("%s %s: %s skipped", s.Change("-"), e.Table, what)
	case apply.PhaseFailed:
		return fmt.Sprintf("%s %s: %s failed: %v", s.Refuse("✗"), e.Table, what, e.Err)
	}
	if st != nil && st.line != "" {
		return st.line
	}
	return fmt.Sprintf("  %s: %s %s", e.Table, what, e.Phase)
}

// amount renders "1.2 GiB of 3.1 GiB" or "12 of 40 files".
func amount(e apply.Event) string {
	if e.Unit == "bytes" {
		if e.Total > 0 {
			return fmt.Sprintf("%s of %s", Bytes(e.Done), Bytes(e.Total))
		}
		return Bytes(e.Done)
	}
	if e.Total > 0 {
		return fmt.Sprintf("%s of %s %s", Count(e.Done), Count(e.Total), e.Unit)
	}
	return fmt.Sprintf("%s %s", Count(e.Done), e.Unit)
}

// elapsed renders a duration for a log line: "850ms", "12.3s", "4m05s".
func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
}
