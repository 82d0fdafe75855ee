package views

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/iceops/iceops/apply"
)

// Progress renders apply.Events on stderr. On a terminal it keeps one live
// status line per table (redrawn in place); otherwise it writes one log
// line per action event, which is what CI logs want. Events arrive from
// many goroutines; a mutex serialises them.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	quiet bool // plan: nothing unless live
	s     *Styles
	now   func() time.Time

	order    []string
	status   map[string]string
	drawn    int
	lastDraw time.Time
}

// redrawEvery bounds how often live lines are repainted: byte counters
// can fire thousands of times a second.
const redrawEvery = 100 * time.Millisecond

// NewProgress returns a renderer. live selects the terminal mode; quiet
// suppresses log lines when not live (plan's observation events are
// noise in a CI log, and its result is the plan itself).
func NewProgress(w io.Writer, live, quiet bool, s *Styles, now func() time.Time) *Progress {
	return &Progress{w: w, live: live, quiet: quiet, s: s, now: now, status: map[string]string{}}
}

// Event is the hook given to apply.PlanOptions.Progress and
// apply.ApplyOptions.Progress.
func (p *Progress) Event(e apply.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.update(e)
		return
	}
	if p.quiet {
		return
	}
	if line := logLine(e); line != "" {
		fmt.Fprintln(p.w, line)
	}
}

// Done clears the live lines so the results that follow start clean.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

func (p *Progress) update(e apply.Event) {
	if _, ok := p.status[e.Table]; !ok {
		p.order = append(p.order, e.Table)
		sort.Strings(p.order)
	}
	p.status[e.Table] = p.statusLine(e)
	// Redraw on every state change, but throttle pure counter updates.
	if e.Phase == apply.PhaseProgress && p.now().Sub(p.lastDraw) < redrawEvery {
		return
	}
	p.lastDraw = p.now()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	for _, t := range p.order {
		fmt.Fprintf(&b, "\x1b[2K%s\n", p.status[t])
	}
	p.drawn = len(p.order)
	io.WriteString(p.w, b.String())
}

func (p *Progress) statusLine(e apply.Event) string {
	s := p.s
	what := e.Action
	if what == "" {
		what = "table"
	}
	switch e.Phase {
	case apply.PhaseObserve:
		return fmt.Sprintf("%s %s: observing…", s.Dim("·"), e.Table)
	case apply.PhasePlanned:
		if e.Err != nil {
			return fmt.Sprintf("%s %s: %s", s.Refuse("✗"), e.Table, e.Err)
		}
		return fmt.Sprintf("%s %s: planned", s.OK("✓"), e.Table)
	case apply.PhaseStart:
		return fmt.Sprintf("%s %s: %s…", s.Change("~"), e.Table, what)
	case apply.PhaseProgress:
		return fmt.Sprintf("%s %s: %s %s", s.Change("~"), e.Table, what, amount(e))
	case apply.PhaseRetry:
		return fmt.Sprintf("%s %s: commit conflict, re-planning…", s.Warn("↻"), e.Table)
	case apply.PhaseDone:
		return fmt.Sprintf("%s %s: %s done", s.OK("✓"), e.Table, what)
	case apply.PhaseSkipped:
		return fmt.Sprintf("%s %s: %s skipped", s.Change("-"), e.Table, what)
	case apply.PhaseFailed:
		return fmt.Sprintf("%s %s: %s failed: %v", s.Refuse("✗"), e.Table, what, e.Err)
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

// logLine is the non-terminal form: one line per action event, no
// counters (they would flood a CI log).
func logLine(e apply.Event) string {
	switch e.Phase {
	case apply.PhaseStart:
		return fmt.Sprintf("%s: %s started", e.Table, e.Action)
	case apply.PhaseDone:
		if e.Total > 0 || e.Done > 0 {
			return fmt.Sprintf("%s: %s done (%s)", e.Table, e.Action, amount(e))
		}
		return fmt.Sprintf("%s: %s done", e.Table, e.Action)
	case apply.PhaseSkipped:
		if e.Err != nil {
			return fmt.Sprintf("%s: %s skipped: %v", e.Table, e.Action, e.Err)
		}
		return fmt.Sprintf("%s: %s skipped", e.Table, e.Action)
	case apply.PhaseFailed:
		return fmt.Sprintf("%s: %s failed: %v", e.Table, e.Action, e.Err)
	case apply.PhaseRetry:
		if e.Err != nil {
			return fmt.Sprintf("%s: commit conflict, re-planning: %v", e.Table, e.Err)
		}
		return fmt.Sprintf("%s: commit conflict, re-planning", e.Table)
	case apply.PhasePlanned:
		if e.Err != nil {
			return fmt.Sprintf("%s: could not be planned: %v", e.Table, e.Err)
		}
	}
	return ""
}
