package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
)

// ResultsJSON writes `apply -json`: the results as one document.
func ResultsJSON(w io.Writer, r *apply.Results) error {
	return writeJSON(w, r, "results")
}

// actionNote is what the row of t's action j says after its cells: why
// it was skipped or how it failed (the table's error on its last action,
// unless an action said it), what it did not apply and the deletes that
// failed.
func actionNote(t *apply.TableResult, j int) string {
	a := &t.Actions[j]
	note := a.Reason
	if a.Error != "" && !partitionSaid(a) {
		note = a.Error
	}
	if j == len(t.Actions)-1 && t.Error != "" && !actionSaid(t) {
		note = strings.TrimPrefix(note+"; "+t.Error, "; ")
	}
	if len(a.NotApplied) > 0 {
		note = strings.TrimPrefix(fmt.Sprintf("%s; %s not applied", note, countOf(len(a.NotApplied), "planned item", "planned items")), "; ")
	}
	if len(a.DeleteErrors) > 0 {
		note = strings.TrimPrefix(fmt.Sprintf("%s; %s", note, countOf(len(a.DeleteErrors), "delete failed", "deletes failed")), "; ")
	}
	return note
}

// Results renders the result table of docs/design.md §5.4: per table and action,
// the status (with why it was skipped or how it failed), files and bytes
// before → after, snapshots expired, files deleted, bytes freed and time,
// then one summary line.
func Results(w io.Writer, r *apply.Results, s *Styles) error {
	var b strings.Builder
	header := []string{"TABLE", "ACTION", "STATUS", "FILES", "BYTES", "SNAPSHOTS", "DELETED", "FREED", "TIME"}
	rows := [][]string{}
	notes := []string{}
	statuses := []string{}
	subs := [][]string{} // a row's lines of its own: a delegated partition each
	for i := range r.Tables {
		t := &r.Tables[i]
		if len(t.Actions) == 0 {
			note := ""
			if t.Error != "" {
				note = t.Error
			}
			status, took := t.Status, ms(t.DurationMs)
			if status == apply.StatusInPolicy {
				status, took = "in policy", ""
			}
			rows = append(rows, []string{t.Address, "-", status, "", "", "", "", "", took})
			notes = append(notes, note)
			statuses = append(statuses, t.Status)
			subs = append(subs, nil)
			continue
		}
		for j := range t.Actions {
			a := &t.Actions[j]
			note := actionNote(t, j)
			rows = append(rows, []string{
				t.Address, string(a.Type), a.Status,
				beforeAfter(a.FilesBefore, a.FilesAfter, Count[int64]),
				beforeAfter(a.BytesBefore, a.BytesAfter, Bytes),
				zeroBlank(int64(a.SnapshotsExpired), Count[int64]),
				zeroBlank(a.FilesDeleted, Count[int64]),
				zeroBlank(a.BytesFreed, Bytes),
				took(a),
			})
			notes = append(notes, note)
			statuses = append(statuses, a.Status)
			subs = append(subs, append(actualLine(a, s), partitionLines(a.Partitions, s)...))
		}
		// What the plan refused, under the table's last action, one line
		// each, unless its error says it already.
		if !strings.Contains(t.Error, t.Refused()) || t.Error == "" {
			last := len(subs) - 1
			for _, rf := range t.PlannedRefusals {
				subs[last] = append(subs[last], s.Refuse("refused in the plan")+": "+rf.Action+": "+s.Dim(rf.Reason))
			}
		}
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	cell := func(row []string, i int) string { return fmt.Sprintf("%-*s", widths[i], row[i]) }
	var line []string
	for i := range header {
		line = append(line, cell(header, i))
	}
	b.WriteString(s.Bold(strings.TrimRight(strings.Join(line, "  "), " ")) + "\n")
	for k, row := range rows {
		line = line[:0]
		for i := range row {
			c := cell(row, i)
			if i == 2 {
				c = statusStyle(statuses[k], s)(c)
			}
			line = append(line, c)
		}
		// Notes start in one column, after the padded TIME cell.
		out := strings.TrimRight(strings.Join(line, "  "), " ")
		if notes[k] != "" {
			out = strings.Join(line, "  ") + "  " + s.Dim(notes[k])
		}
		b.WriteString(out + "\n")
		// Under the ACTION column, one line each, whatever their length.
		for _, l := range subs[k] {
			b.WriteString(strings.Repeat(" ", widths[0]+2) + "  " + l + "\n")
		}
	}
	b.WriteString(filePlaces(r, s))
	b.WriteString(otherTablesLine(r, s))
	b.WriteString("\n" + resultSummary(r, s) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// actualLine is the one line of what an action that ran really did, with
// the plan's estimate beside it (docs/cost.md, Actuals): requests, bytes
// read and written, CPU time ("~" when apportioned among actions running
// at once). None for an action not counted.
func actualLine(a *apply.ActionResult, s *Styles) []string {
	u := a.Actual
	if u == nil {
		return nil
	}
	cpu := fmt.Sprintf("%.2fs", u.CPUSeconds)
	if a.ActualCPUApproximate {
		cpu = "~" + cpu
	}
	line := fmt.Sprintf("actual: %s, %s read, %s written, %s CPU",
		countOf(u.Requests.Total(), "request", "requests"), Bytes(u.BytesRead), Bytes(u.BytesWritten), cpu)
	if e := a.Estimate; e != nil {
		line += s.Dim(fmt.Sprintf(" (estimate: %s, %s, %s, %.2fs)",
			Count(e.Requests.Total()), Bytes(e.BytesRead), Bytes(e.BytesWritten), e.CPUSeconds))
	}
	return []string{line}
}

// otherTablesLine is the run's read of other tables' references, apart
// from the action whose deletion asked first: what apply counted, with the
// plan's estimate beside it; "" when neither has anything.
func otherTablesLine(r *apply.Results, s *Styles) string {
	rc := r.OtherTablesReferences
	if rc == nil {
		return ""
	}
	line := "\nOther tables' references (read once by the run): "
	if u := rc.Actual; u != nil {
		line += fmt.Sprintf("actual: %s, %s read", countOf(u.Requests.Total(), "request", "requests"), Bytes(u.BytesRead))
	} else {
		line += "actual: not counted"
	}
	if e := rc.Estimate; e != nil {
		line += s.Dim(fmt.Sprintf(" (estimate: %s, %s)", Count(e.Requests.Total()), Bytes(e.BytesRead)))
	}
	return line + "\n"
}

// partitionLines are an action's delegated partitions, one line each:
// where, by which engine, the status and the engine's account or error.
func partitionLines(ps []diff.PartitionOutcome, s *Styles) []string {
	var out []string
	for _, p := range ps {
		where := p.Partition
		if where == "" {
			where = "(unpartitioned)"
		}
		what := p.Detail
		if p.Error != "" {
			what = p.Error
		}
		line := fmt.Sprintf("partition %s by engine %q: %s", where, p.Engine, statusStyle(p.Status, s)(p.Status))
		if what != "" {
			line += ": " + s.Dim(what)
		}
		out = append(out, line)
	}
	return out
}

// partitionSaid: the action's error is one of its partitions', which its
// own line says; the action's note counts them instead of saying it again.
func partitionSaid(a *apply.ActionResult) bool {
	for _, p := range a.Partitions {
		if p.Error != "" && strings.HasSuffix(a.Error, p.Error) {
			return true
		}
	}
	return false
}

// actionSaid: the table's error is an action's (the table failed because
// that action did), which that action's row says already.
func actionSaid(t *apply.TableResult) bool {
	for _, a := range t.Actions {
		if a.Error != "" && strings.Contains(t.Error, a.Error) {
			return true
		}
	}
	return false
}

// filePlaces names, for each action that did not finish its files, every
// file and where it is (issue 32): those that moved (files_moved), then one
// line per failure (delete_errors: still in place, in both places, or a
// place unknown). Nothing when every action finished its files.
func filePlaces(r *apply.Results, s *Styles) string {
	var b strings.Builder
	for _, t := range r.Tables {
		for _, a := range t.Actions {
			if len(a.DeleteErrors) == 0 && len(a.FilesMoved) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n%s %s: where each file is\n", t.Address, a.Type)
			for _, m := range a.FilesMoved {
				b.WriteString("  moved: " + m + "\n")
			}
			for _, e := range a.DeleteErrors {
				b.WriteString("  " + s.Refuse(e) + "\n")
			}
		}
	}
	return b.String()
}

func statusStyle(status string, s *Styles) func(string) string {
	switch status {
	case apply.StatusDone:
		return s.Add
	case apply.StatusSkipped:
		return s.Change
	case apply.StatusFailed:
		return s.Refuse
	case apply.StatusInterrupted:
		return s.Warn
	}
	return s.Dim
}

func resultSummary(r *apply.Results, s *Styles) string {
	sum := r.Summary
	var head string
	switch {
	case r.Interrupted:
		head = s.Warn("Apply interrupted:") + " no new work was started after the signal;"
	case r.HasFailure():
		head = s.Refuse("Apply finished with errors:")
	case r.Failed():
		// Nothing failed, yet the plan refused something: exit 1 all
		// the same (docs/cli.md, Exit codes).
		head = s.Refuse("Apply finished with refusals:")
	default:
		head = s.OK("Apply complete!")
	}
	// Tables and actions counted apart, each named: "2 failed; 0
	// actions done" read as two counts of one thing.
	parts := []string{
		fmt.Sprintf("tables: %s changed, %s failed", Count(sum.TablesChanged), Count(sum.TablesFailed)) + refusedCount(sum.TablesRefused),
		fmt.Sprintf("actions: %s done, %s skipped, %s failed",
			Count(sum.ActionsDone), Count(sum.ActionsSkipped), Count(sum.ActionsFailed)),
	}
	if sum.Snapshots > 0 || sum.FilesDeleted > 0 {
		parts = append(parts, fmt.Sprintf("%s expired, %s deleted, %s freed",
			countOf(sum.Snapshots, "snapshot", "snapshots"), countOf(sum.FilesDeleted, "file", "files"), Bytes(sum.BytesFreed)))
	}
	return head + " " + strings.Join(parts, "; ") + "."
}

// refusedCount is the summary's count of tables with refusals, when any.
func refusedCount(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %s with refusals", Count(n))
}

func beforeAfter(before, after int64, f func(int64) string) string {
	if before == 0 && after == 0 {
		return ""
	}
	if before == after {
		return f(before)
	}
	return f(before) + " -> " + f(after)
}

func zeroBlank(n int64, f func(int64) string) string {
	if n == 0 {
		return ""
	}
	return f(n)
}

// took is an action's time; blank for a skip that did no work.
func took(a *apply.ActionResult) string {
	if a.Status == apply.StatusSkipped && a.DurationMs == 0 {
		return ""
	}
	return ms(a.DurationMs)
}

// ms renders a duration in milliseconds for people: "850ms", "2.3s", "4m05s".
func ms(d int64) string {
	switch {
	case d < 1000:
		return fmt.Sprintf("%dms", d)
	case d < 60_000:
		return fmt.Sprintf("%.1fs", float64(d)/1000)
	default:
		return fmt.Sprintf("%dm%02ds", d/60_000, (d%60_000)/1000)
	}
}
