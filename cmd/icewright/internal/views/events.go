package views

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/icewright/icewright/apply"
)

// EventsUIVersion versions the apply -json event stream (the shape of
// jsonEvent); fields are only added within 1.x.
const EventsUIVersion = "1.0"

// jsonEvent is one line of the apply -json stream (docs/plan-format.md,
// "apply -json"). Every line has type, timestamp, level and message; the
// other fields are there when the event has them.
type jsonEvent struct {
	Type             string `json:"type"`
	Timestamp        string `json:"timestamp"` // RFC 3339 with fractions, UTC
	Level            string `json:"level"`     // info, warn or error
	Message          string `json:"message"`
	IcewrightVersion string `json:"icewright_version,omitempty"` // version
	UIVersion        string `json:"ui_version,omitempty"`        // version
	Catalog          string `json:"catalog,omitempty"`
	Table            string `json:"table,omitempty"`
	Action           string `json:"action,omitempty"`
	Done             *int64 `json:"done,omitempty"` // set whenever the event is a counter, 0 included
	Total            int64  `json:"total,omitempty"`
	Unit             string `json:"unit,omitempty"`
	Error            string `json:"error,omitempty"`
}

// eventTypes maps a phase to its stream type; the catalog phases come
// first because a catalog event has no table.
var eventTypes = map[string]string{
	apply.PhaseConnect:   "catalog_connect",
	apply.PhaseConnected: "catalog_connected",
	apply.PhaseObserve:   "table_observe",
	apply.PhasePlanned:   "table_planned",
	apply.PhaseStart:     "action_start",
	apply.PhaseProgress:  "action_progress",
	apply.PhaseRetry:     "table_retry",
	apply.PhaseDone:      "action_done",
	apply.PhaseSkipped:   "action_skipped",
	apply.PhaseFailed:    "action_failed",
	apply.PhaseFinished:  "table_finished",
}

// catalogFailed is the type of a catalog that could not be listed (its
// phase is PhaseConnected, with the error).
const catalogFailed = "catalog_failed"

// resultsType is the type of the stream's last line, the results document.
const resultsType = "results"

// EventTypes lists the stream's types, for docs and their test.
func EventTypes() []string {
	out := []string{"version", catalogFailed, resultsType}
	for _, ph := range []string{apply.PhaseConnect, apply.PhaseConnected, apply.PhaseObserve, apply.PhasePlanned,
		apply.PhaseStart, apply.PhaseProgress, apply.PhaseRetry, apply.PhaseDone, apply.PhaseSkipped, apply.PhaseFailed, apply.PhaseFinished} {
		out = append(out, eventTypes[ph])
	}
	return append(out, "interrupted")
}

// EventFields lists the JSON names of an event line's fields, for docs
// and their test.
func EventFields() []string {
	t := reflect.TypeFor[jsonEvent]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// Version writes the stream's first line: which icewright and which stream
// version (as Terraform's machine-readable UI starts).
func (p *Progress) Version(icewright string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeJSON(jsonEvent{Type: "version", Level: "info", Message: "icewright " + icewright, IcewrightVersion: icewright, UIVersion: EventsUIVersion})
}

// jsonEvent writes e as one line; the message is the log line the text
// mode would print (or a plain one where that prints none).
func (p *Progress) jsonEvent(e apply.Event) {
	st := p.running[e.Table]
	if e.Phase == apply.PhaseProgress && st != nil && p.now().Sub(st.emitted) < jsonProgressEvery {
		p.track(e)
		return
	}
	msg := p.track(e)
	if st = p.running[e.Table]; st != nil && e.Phase == apply.PhaseProgress {
		st.emitted = p.now()
	}
	je := jsonEvent{Type: eventTypes[e.Phase], Level: "info", Message: msg, Catalog: e.Catalog, Table: e.Table, Action: e.Action,
		Total: e.Total, Unit: e.Unit}
	if e.Done != 0 || e.Unit != "" || e.Total != 0 || e.Phase == apply.PhaseProgress {
		// A counter keeps done: 0 (a stream reader sees 0 of N, not a
		// missing field).
		done := e.Done
		je.Done = &done
	}
	if je.Type == "" {
		je.Type = e.Phase
	}
	if e.Phase == apply.PhaseConnected && e.Err != nil {
		// A catalog that could not be listed did not connect.
		je.Type, je.Done = catalogFailed, nil
	}
	if e.Err != nil {
		je.Error = e.Err.Error()
		je.Level = "error"
		if e.Phase == apply.PhaseSkipped || e.Phase == apply.PhaseRetry {
			je.Level = "warn"
		}
	}
	if je.Message == "" {
		switch {
		case e.Phase == apply.PhaseProgress:
			je.Message = fmt.Sprintf("%s: %s %s", e.Table, e.Action, amount(e))
		case e.Catalog != "":
			je.Message = fmt.Sprintf("catalog %s: %s", e.Catalog, e.Phase)
		case e.Action != "":
			je.Message = fmt.Sprintf("%s: %s %s", e.Table, e.Action, e.Phase)
		default:
			je.Message = fmt.Sprintf("%s: %s", e.Table, e.Phase)
		}
	}
	p.writeJSON(je)
}

// writeJSON writes one line; p.mu is held.
func (p *Progress) writeJSON(e jsonEvent) {
	e.Timestamp = p.now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(e)
	if err != nil {
		return // a struct of strings and numbers always encodes
	}
	_, _ = p.w.Write(append(b, '\n'))
}

// ResultsJSONLine writes the results document as one line: the last line
// of the apply -json stream, with "type": "results" first, as every line
// of the stream has a type.
func ResultsJSONLine(w io.Writer, r *apply.Results) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if len(b) > 2 && b[0] == '{' {
		b = append([]byte(`{"type":"`+resultsType+`",`), b[1:]...)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
