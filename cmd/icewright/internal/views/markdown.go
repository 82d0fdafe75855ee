package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/diff"
)

// PlanMarker is the hidden first line of a Markdown plan. A pull-request
// bot looks for it among a pull request's comments and edits that comment
// instead of adding one per push (as tfcmt does).
const PlanMarker = "<!-- icewright-plan -->"

// PlanMarkdown renders the plan as a pull-request comment (GitHub and
// GitLab flavoured Markdown): the summary line, a table of the tables to
// change, the destructive actions called out, refusals, errors and
// warnings, then one collapsible section per table holding its text plan.
// Everything comes from the same diff.Plan as the text and the JSON.
func PlanMarkdown(w io.Writer, p *diff.Plan) error {
	plain := NewStyles(false)
	var b strings.Builder
	b.WriteString(PlanMarker + "\n")
	b.WriteString("### icewright plan\n\n")
	b.WriteString(Summary(p, plain) + "\n")
	if c := planCost(p); c != nil {
		b.WriteString("\n**Cost:** " + mdText(costSentence(c)) + "\n")
	}
	if o := otherTablesSentence(p); o != "" {
		b.WriteString("\n**Other tables' references:** " + mdText(o) + "\n")
	}
	if len(p.Targets) > 0 {
		fmt.Fprintf(&b, "\n**Targeted plan:** only tables matching %s were planned; other tables may not be in policy.\n",
			strings.Join(mdCodeAll(p.Targets), ", "))
	}

	var shown []*diff.TablePlan
	for i := range p.Tables {
		if !p.Tables[i].Empty() {
			shown = append(shown, &p.Tables[i])
		}
	}
	if len(shown) > 0 {
		writeSummaryTable(&b, shown, planCost(p))
	}

	var destructive []string
	for _, t := range shown {
		for i := range t.Actions {
			a := &t.Actions[i]
			if !a.Destructive {
				continue
			}
			for _, line := range actionLines(a, p.CreatedAt, plain) {
				// actionLines starts with the symbol ("- expire ...").
				destructive = append(destructive, fmt.Sprintf("%s: %s", mdCode(t.Address), mdText(strings.TrimPrefix(line, "- "))))
			}
		}
	}
	if len(destructive) > 0 {
		b.WriteString("\n> [!CAUTION]\n> **Destructive actions**: these delete files and cannot be undone.\n>\n")
		for _, d := range destructive {
			b.WriteString("> - " + d + "\n")
		}
	}

	if len(p.Refusals) > 0 || len(p.Errors) > 0 {
		b.WriteString("\n#### Refused or not planned (the plan exits 1)\n\n")
		for _, r := range refusalsOf(p) {
			fmt.Fprintf(&b, "- %s: %s refused: %s\n", mdCode(r.Address), mdCode(r.Action), mdText(r.Reason))
		}
		for _, e := range p.Errors {
			fmt.Fprintf(&b, "- %s: could not be planned: %s\n", mdCode(e.Address), mdText(e.Message))
		}
	}

	var warnings []string
	for _, wn := range p.Warnings {
		warnings = append(warnings, warningItem("", wn))
	}
	for i := range p.Tables {
		for _, wn := range p.Tables[i].Warnings {
			warnings = append(warnings, warningItem(p.Tables[i].Address, wn))
		}
	}
	if len(warnings) > 0 {
		b.WriteString("\n#### Warnings\n\n")
		for _, wn := range warnings {
			b.WriteString("- " + wn + "\n")
		}
	}

	for _, t := range shown {
		var tb strings.Builder
		writeTable(&tb, t, p.CreatedAt, plain)
		what := countOf(len(t.Actions), "action", "actions")
		if n := len(t.Refusals); n > 0 {
			what += ", " + countOf(n, "refusal", "refusals")
		}
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code>: %s</summary>\n\n%s\n</details>\n",
			htmlEscape(t.Address), what, mdFence(tb.String()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummaryTable is the table of the tables to change, one row each.
// With estimates (plan format 2.1) it has the cost columns and a total
// row: the run's cost, the saving per month and the payback time.
func writeSummaryTable(b *strings.Builder, shown []*diff.TablePlan, total *cost) {
	if total == nil {
		b.WriteString("\n| Table | Actions | Destructive | To rewrite | To delete |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: |\n")
	} else {
		b.WriteString("\n| Table | Actions | Destructive | To rewrite | To delete | Cost | Saves | Payback |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	}
	var sum mdRow
	for _, t := range shown {
		r := rowOf(t)
		sum.add(r)
		fmt.Fprintf(b, "| %s | %s |", mdCell(mdCode(t.Address)), r.cells())
		if total != nil {
			b.WriteString(costCellsMd(tableCost(t)))
		}
		b.WriteString("\n")
	}
	if total != nil {
		fmt.Fprintf(b, "| **Total** | %s |%s\n", sum.cells(), costCellsMd(total))
	}
}

// costCellsMd are the Cost, Saves and Payback cells of a summary row:
// money when the storage has prices, else the quantities (CPU time and
// requests; bytes freed).
func costCellsMd(c *cost) string {
	if c == nil {
		return " – | – | – |"
	}
	u := c.u
	if c.priced {
		return fmt.Sprintf(" %s | %s/month | %s |", diff.FormatUSD(c.m.Run), diff.FormatUSD(c.m.SavingPerMonth), Payback(c.m))
	}
	return fmt.Sprintf(" %s CPU-s, %s | %s freed | – |", CPUSeconds(u.CPUSeconds),
		countOf(u.Requests.Total(), "request", "requests"), Bytes(u.BytesFreed))
}

// mdRow is one table's summary-table figures: its actions, the bytes
// compaction rewrites, and the files and bytes expiry and orphan removal
// delete.
type mdRow struct {
	actions, destructive  int
	rewrite, files, bytes int64
}

func (r *mdRow) add(o mdRow) {
	r.actions += o.actions
	r.destructive += o.destructive
	r.rewrite += o.rewrite
	r.files += o.files
	r.bytes += o.bytes
}

// cells are the row's Actions, Destructive, To rewrite and To delete cells.
func (r mdRow) cells() string {
	destructive, rewrite, del := "–", "–", "–"
	if r.destructive > 0 {
		destructive = "⚠️ " + Count(r.destructive)
	}
	if r.rewrite > 0 {
		rewrite = Bytes(r.rewrite)
	}
	if r.files > 0 {
		del = fmt.Sprintf("%s (%s)", countOf(r.files, "file", "files"), Bytes(r.bytes))
	}
	return fmt.Sprintf("%d | %s | %s | %s", r.actions, destructive, rewrite, del)
}

// rowOf sums one table's summary-table figures.
func rowOf(t *diff.TablePlan) mdRow {
	r := mdRow{actions: len(t.Actions)}
	for i := range t.Actions {
		a := &t.Actions[i]
		if a.Destructive {
			r.destructive++
		}
		switch {
		case a.Compact != nil:
			r.rewrite += a.Compact.InputBytes
		case a.Expire != nil:
			r.files += a.Expire.FilesToDelete
			r.bytes += a.Expire.BytesToDelete
		case a.Orphans != nil:
			r.files += int64(a.Orphans.Count)
			r.bytes += a.Orphans.Bytes
			for _, run := range a.Orphans.PurgeRuns {
				r.files += run.Files
				r.bytes += run.Bytes
			}
		}
	}
	return r
}

// refusalsOf is the plan's refusals, derived again from the tables (a
// hand-edited file's list is not trusted, as Summary does).
func refusalsOf(p *diff.Plan) []diff.AddressedRefusal {
	cp := *p
	diff.Summarize(&cp)
	return cp.Refusals
}

func warningItem(address string, w diff.Warning) string {
	var b strings.Builder
	if w.Code != "" {
		b.WriteString(mdCode(w.Code) + " ")
	}
	if w.Origin != "" {
		b.WriteString(mdCode(w.Origin) + ": ")
	}
	if address != "" {
		b.WriteString(mdCode(address) + ": ")
	}
	b.WriteString(mdText(w.Message))
	if w.Detail != "" {
		b.WriteString(": " + mdText(w.Detail))
	}
	return b.String()
}

// mdCode renders s as inline code, with a backtick fence longer than any
// run of backticks inside it.
func mdCode(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func mdCodeAll(items []string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = mdCode(it)
	}
	return out
}

// mdFence renders a block as a fenced code block whose fence no line of
// the block can close.
func mdFence(s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// mdText escapes what would turn prose into markup: HTML (a path or an
// error message with "<" would open a tag), and the characters that
// start emphasis, links or code.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '~':
			b.WriteByte('\\')
		case '\n':
			b.WriteString(" ")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCell escapes a table cell's pipes (inline code included, as GFM
// requires).
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// ConfigErrorsMarkdown is the pull-request comment of a plan that stopped
// at the configuration: the marker, so that it replaces the last plan's
// comment, and the errors as `icewright validate` prints them.
func ConfigErrorsMarkdown(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) error {
	var text strings.Builder
	DiagnosticsWith(&text, files, diags, NewStyles(false), false)
	var b strings.Builder
	b.WriteString(PlanMarker + "\n")
	b.WriteString("### icewright plan\n\n")
	b.WriteString("Error: the configuration has errors, so nothing was planned (the plan exits 1).\n\n")
	fence := "```"
	for strings.Contains(text.String(), fence) {
		fence += "`"
	}
	fmt.Fprintf(&b, "%stext\n%s%s\n", fence, strings.TrimRight(text.String(), "\n")+"\n", fence)
	_, err := io.WriteString(w, b.String())
	return err
}
