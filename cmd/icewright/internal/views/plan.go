package views

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// Masked is what a secret value is printed as.
const Masked = config.Masked

// Plan renders the human plan of docs/design.md §5.2. Its warnings and
// errors are PlanProblems', on stderr.
func Plan(w io.Writer, p *diff.Plan, s *Styles) error {
	var b strings.Builder
	changed := 0
	for i := range p.Tables {
		if len(p.Tables[i].Actions) > 0 || len(p.Tables[i].Refusals) > 0 {
			changed++
		}
	}
	if changed > 0 {
		b.WriteString("icewright will perform the following actions:\n\n")
	}
	for i := range p.Tables {
		t := &p.Tables[i]
		if len(t.Actions) == 0 && len(t.Refusals) == 0 {
			continue
		}
		writeTable(&b, t, p.CreatedAt, s)
		b.WriteString("\n")
	}
	// Errors and warnings are on stderr (PlanProblems): a pipeline's log
	// shows them, and stdout carries only the plan.
	b.WriteString(Summary(p, s))
	b.WriteString("\n")
	if c := planCost(p); c != nil {
		// The plan's total estimate, under the counts (docs/cost.md).
		b.WriteString(s.Bold("Cost:") + " " + costSentence(c) + "\n")
	}
	if o := otherTablesSentence(p); o != "" {
		b.WriteString("Other tables' references: " + o + "\n")
	}
	if len(p.Targets) > 0 {
		// As Terraform: a targeted plan is partial, and says so.
		fmt.Fprintf(&b, "\n%s only tables matching %s were planned; other tables may not be in policy.\n",
			s.Warn("Targeted plan:"), strings.Join(quoteAll(p.Targets), ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTable(b *strings.Builder, t *diff.TablePlan, createdAt time.Time, s *Styles) {
	sym := s.Change("~")
	if len(t.Actions) == 0 {
		sym = s.Refuse("!")
	}
	fmt.Fprintf(b, "  %s\n", s.Dim("# "+t.Address))
	fmt.Fprintf(b, "  %s table %s {\n", sym, strconv.Quote(t.Address))
	const ind = "      "
	costLines, totalLine := tableCostLines(t, s)
	for i := range t.Actions {
		a := &t.Actions[i]
		for _, line := range actionLines(a, createdAt, s) {
			b.WriteString(ind + line + "\n")
		}
		if costLines[i] != "" {
			b.WriteString(ind + "  " + costLines[i] + "\n")
		}
		// A reason that cites several attributes (update_properties)
		// gets one comment line per attribute.
		if a.Reason != "" {
			for _, r := range splitReasons(maskReason(a)) {
				b.WriteString(ind + s.Dim("# "+r) + "\n")
			}
		}
		if a.Type == diff.RewriteManifests && a.Manifests != nil && runsBefore(t, i, diff.Compact) {
			// The compaction commits first and drops the manifests of the
			// files it rewrites, so the results' "before" is smaller.
			b.WriteString(ind + s.Dim(fmt.Sprintf("# %s counted before the compaction above; apply rewrites those left after it",
				countOf(a.Manifests.ManifestsBefore, "manifest", "manifests"))) + "\n")
		}
		if a.Type == diff.Compact && runsBefore(t, i, diff.AgePartitions) {
			// The ageing commits first and moves its partitions' files into
			// the coarser spec: apply compacts what is left after it.
			b.WriteString(ind + s.Dim("# counted before the ageing above; apply compacts what is left after it") + "\n")
		}
	}
	for _, r := range t.Refusals {
		fmt.Fprintf(b, "%s%s %s\n", ind, s.Refuse("!"), s.Refuse("refused "+string(r.Action)+": ")+r.Reason)
	}
	if totalLine != "" {
		b.WriteString(ind + "  " + totalLine + "\n")
	}
	b.WriteString("    }\n")
}

// tableCostLines are a table's cost lines, aligned as one block: one per
// action ("" for an action without an estimate), and the table's total
// when it has more than one action with an estimate.
func tableCostLines(t *diff.TablePlan, s *Styles) (perAction []string, total string) {
	perAction = make([]string, len(t.Actions))
	var (
		labels []string
		costs  []*cost
		styles []func(string) string
		at     []int
	)
	for i := range t.Actions {
		if c := actionCost(t, &t.Actions[i]); c != nil {
			labels, costs, styles, at = append(labels, "cost"), append(costs, c), append(styles, s.Dim), append(at, i)
		}
	}
	if len(costs) == 0 {
		return perAction, ""
	}
	withTotal := len(costs) > 1
	if withTotal {
		labels, costs, styles = append(labels, "total"), append(costs, tableCost(t)), append(styles, s.Bold)
	}
	lines := costBlock(labels, costs, styles)
	for k, i := range at {
		perAction[i] = lines[k]
	}
	if withTotal {
		total = lines[len(lines)-1]
	}
	return perAction, total
}

// actionLines renders one action with its kind's view. A kind this view
// does not know (a newer plan format 1.x) is still shown rather than
// dropped: the reviewer must see every action.
func actionLines(a *diff.Action, createdAt time.Time, s *Styles) []string {
	if view, ok := actionViews[a.Type]; ok {
		if lines, ok := view(a, createdAt, s); ok {
			return lines
		}
	}
	sym := s.Change("~")
	if a.Destructive {
		sym = s.Remove("-")
	}
	return []string{fmt.Sprintf("%s %s", sym, a.Type)}
}

// runsBefore reports whether an action of kind runs before action i.
func runsBefore(t *diff.TablePlan, i int, kind diff.ActionType) bool {
	for _, a := range t.Actions[:i] {
		if a.Type == kind {
			return true
		}
	}
	return false
}

// actionView renders one action of its kind; ok is false when the payload
// is missing.
type actionView func(a *diff.Action, createdAt time.Time, s *Styles) (lines []string, ok bool)

// actionViews holds one view per action kind (diff.Kinds; a test fails
// when a kind has none). Each kind has its own sentence; the symbol says
// what kind of change it is (+ ~ - as Terraform; » for a rewrite that
// keeps every row).
var actionViews = map[diff.ActionType]actionView{
	diff.UpdateProperties: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		if a.Properties == nil {
			return nil, false
		}
		return propertyLines(a.Properties, s), true
	},
	diff.ReplaceSortOrder: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		c := a.SortOrder
		if c == nil {
			return nil, false
		}
		return []string{fmt.Sprintf("%s sort_order = %s -> %s", s.Change("~"), quoteList(c.Before), quoteList(c.After))}, true
	},
	diff.RemoveDanglingDeletes: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		d := a.DanglingDeletes
		if d == nil {
			return nil, false
		}
		// "~": the metadata changes, no file is deleted from storage and
		// no row changes.
		return []string{fmt.Sprintf("%s remove %s (%s) from the metadata: %s dropped, %s rewritten",
			s.Change("~"), countOf(d.DeleteFiles, "dangling delete file", "dangling delete files"), Bytes(d.DeleteBytes),
			countOf(d.ManifestsDropped, "delete manifest", "delete manifests"), Count(d.ManifestsRewritten))}, true
	},
	diff.AgePartitions: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		g := a.PartitionAgeing
		if g == nil {
			return nil, false
		}
		spec := fmt.Sprintf("spec %d", g.TargetSpecID)
		switch {
		case g.AddsSpec && g.SetsDefault:
			spec = fmt.Sprintf("new spec %d, made the default", g.TargetSpecID)
		case g.AddsSpec:
			spec = fmt.Sprintf("new spec %d (not the default)", g.TargetSpecID)
		case g.SetsDefault:
			spec += ", made the default"
		}
		if len(g.Groups) == 0 {
			what := fmt.Sprintf("spec %d", g.TargetSpecID)
			if g.AddsSpec {
				what = "new " + what
			}
			return []string{fmt.Sprintf("%s make %s (%s of %s) the default partition spec; no %s partition is old enough yet",
				s.Change("~"), what, g.To, g.Column, g.From)}, true
		}
		lines := []string{fmt.Sprintf("%s age %s (%s, %s) of %s into %s of %s",
			s.Rewrite("»"), countOf(g.InputFiles, "file", "files"), Bytes(g.InputBytes), countOf(g.Records, "record", "records"),
			g.From+" partitions", countOf(len(g.Groups), g.To+" partition", g.To+" partitions"), spec)}
		// Which finer partitions go where: the reviewer sees every coarser
		// partition the commit writes.
		for _, gr := range g.Groups {
			lines = append(lines, fmt.Sprintf("    %s <- %s (%s, %s)", gr.Partition,
				countOf(len(gr.Sources), g.From+" partition", g.From+" partitions"), countOf(gr.InputFiles, "file", "files"), Bytes(gr.InputBytes)))
		}
		return lines, true
	},
	diff.Compact: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		c := a.Compact
		if c == nil {
			return nil, false
		}
		line := fmt.Sprintf("%s compact %s (%s) in %s into ~%s (%s)",
			s.Rewrite("»"), countOf(c.InputFiles, "file", "files"), Bytes(c.InputBytes),
			countOf(c.Partitions, "partition", "partitions"),
			countOf(c.EstimatedOutputFiles, "file", "files"), c.Strategy)
		if c.Where != "" {
			// Only partitions the where may match were counted.
			line += " where " + strconv.Quote(c.Where)
		}
		if c.AssignRowIDs {
			// A commit of its own before the rewrite; the reviewer sees it.
			line += ", after a manifest rewrite that assigns row ids"
		}
		lines := []string{line}
		// A delegated partition shows the exact statement apply sends,
		// so the reviewer approves what the engine will run.
		for _, call := range c.EngineCalls {
			part := call.Partition
			if part == "" {
				part = "(unpartitioned)"
			}
			lines = append(lines,
				fmt.Sprintf("    partition %s (%s, %s) by engine %q: %s", part, countOf(call.InputFiles, "file", "files"), Bytes(call.InputBytes), call.Engine, call.Bound),
				"      "+call.Statement)
		}
		// What a budget (max_bytes_per_run, max_cost, max_cpu_hours) left
		// for a later run: the plan says what waits, never only what runs.
		if c.SkippedGroups > 0 {
			why := c.SkippedReason
			if why == "" {
				why = fmt.Sprintf("%s (%s) wait for the next run", countOf(c.SkippedGroups, "group", "groups"), Bytes(c.SkippedBytes))
			}
			lines = append(lines, "    "+why)
		}
		return lines, true
	},
	diff.RewriteManifests: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		m := a.Manifests
		if m == nil {
			return nil, false
		}
		return []string{fmt.Sprintf("%s rewrite %s into ~%s",
			s.Rewrite("»"), countOf(m.ManifestsBefore, "manifest", "manifests"), Count(m.EstimatedManifestsAfter))}, true
	},
	diff.ExpireSnapshots: func(a *diff.Action, createdAt time.Time, s *Styles) ([]string, bool) {
		if a.Expire == nil {
			return nil, false
		}
		lines := []string{s.Remove("-") + " " + expireSentence(a.Expire, createdAt)}
		// Removing a named ref is destructive in its own right (people
		// name tags to keep a state; a copy of "0s" once removed them all),
		// so each one is its own line with a caution, and the Markdown
		// view's caution block lists it.
		for _, ref := range a.Expire.RefsToRemove {
			lines = append(lines, fmt.Sprintf("%s remove ref %s %s", s.Remove("-"), strconv.Quote(ref),
				s.Warn("(caution: a named tag or branch past max_ref_age; icewright cannot restore it)")))
		}
		return lines, true
	},
	diff.RemoveOrphanFiles: func(a *diff.Action, _ time.Time, s *Styles) ([]string, bool) {
		o := a.Orphans
		if o == nil {
			return nil, false
		}
		var lines []string
		if o.Count > 0 || len(o.PurgeRuns) == 0 {
			lines = append(lines, s.Remove("-")+" "+orphanSentence(o))
		}
		if len(o.PurgeRuns) > 0 {
			lines = append(lines, s.Remove("-")+" "+purgeSentence(o.PurgeRuns))
		}
		return lines, true
	},
}

func propertyLines(p *diff.PropertiesChange, s *Styles) []string {
	keys := sortedKeys(p.Set)
	width := 0
	for _, k := range append(append([]string(nil), keys...), p.Remove...) {
		if n := len(strconv.Quote(k)); n > width {
			width = n
		}
	}
	var lines []string
	for _, k := range keys {
		qk := fmt.Sprintf("%-*s", width, strconv.Quote(k))
		after := maskValue(p, k, p.Set[k])
		if before, ok := p.Before[k]; ok {
			lines = append(lines, fmt.Sprintf("%s property %s = %s -> %s", s.Change("~"), qk, maskValue(p, k, before), after))
		} else {
			lines = append(lines, fmt.Sprintf("%s property %s = %s", s.Add("+"), qk, after))
		}
	}
	for _, k := range p.Remove {
		line := fmt.Sprintf("%s property %s", s.Remove("-"), strconv.Quote(k))
		if before, ok := p.Before[k]; ok {
			line = fmt.Sprintf("%s property %-*s = %s", s.Remove("-"), width, strconv.Quote(k), maskValue(p, k, before))
		}
		lines = append(lines, line)
	}
	return lines
}

// splitReasons splits "a (f:1); b (f:2)" at the top-level "; " only, not
// inside parentheses or quotes ("(default; block at f:9)").
func splitReasons(r string) []string {
	var out []string
	depth, inQuote, start := 0, false, 0
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ';' && depth == 0 && strings.HasPrefix(r[i:], "; "):
			out = append(out, r[start:i])
			start = i + 2
			i++
		}
	}
	return append(out, r[start:])
}

// maskReason hides secret property values that a reason quotes
// (`properties["k"] = "v" (file:line)`). Plans made now never quote them
// (diff writes Masked); a plan saved by an older icewright may.
func maskReason(a *diff.Action) string {
	r := a.Reason
	if a.Properties == nil {
		return r
	}
	for _, m := range []map[string]string{a.Properties.Set, a.Properties.Before} {
		for k, v := range m {
			if isSecretKey(k) && v != "" {
				r = strings.ReplaceAll(r, strconv.Quote(v), Masked)
			}
		}
	}
	return r
}

// maskValue shows a property value, or Masked for a secret one (the plan
// holds only its digest then).
func maskValue(p *diff.PropertiesChange, key, value string) string {
	if slices.Contains(p.Sensitive, key) || isSecretKey(key) {
		return Masked
	}
	return strconv.Quote(value)
}

func expireSentence(e *diff.ExpireAction, createdAt time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "expire %s", countOf(len(e.SnapshotIDs), "snapshot", "snapshots"))
	if e.MaxAge != "" {
		fmt.Fprintf(&b, " older than %s", e.MaxAge)
	}
	if e.OldestTimestampMs > 0 && !createdAt.IsZero() {
		fmt.Fprintf(&b, " (oldest %s)", AgeMs(createdAt.UnixMilli()-e.OldestTimestampMs))
	}
	// The snapshots a ref protects are among those kept: say so, so that
	// "1 kept" and the tag's 1 do not read as two snapshots.
	fmt.Fprintf(&b, "; %s kept", Count(e.Kept))
	if refs := sortedKeys(e.ProtectedByRef); len(refs) > 0 {
		by := make([]string, len(refs))
		for i, ref := range refs {
			by[i] = fmt.Sprintf("%s by %s", Count(e.ProtectedByRef[ref]), ref)
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(by, ", "))
	}
	if e.FilesToDelete > 0 {
		fmt.Fprintf(&b, "; frees %s (%s)", countOf(e.FilesToDelete, "file", "files"), Bytes(e.BytesToDelete))
	}
	if e.EscapedFileURIs > 0 {
		fmt.Fprintf(&b, "; %s named by file: URIs with percent-escapes, each deleted under its literal name only if no file has its decoded name, else left (reported)",
			countOf(e.EscapedFileURIs, "file", "files"))
	}
	return b.String()
}

func orphanSentence(o *diff.OrphansAction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "remove %s (%s)", countOf(o.Count, "orphan file", "orphan files"), Bytes(o.Bytes))
	if o.OlderThan != "" {
		fmt.Fprintf(&b, " older than %s", o.OlderThan)
	}
	if o.KeptByAgeGuard > 0 {
		fmt.Fprintf(&b, "; %s kept by the age guard", countOf(o.KeptByAgeGuard, "newer file", "newer files"))
	}
	if o.Excluded > 0 {
		fmt.Fprintf(&b, "; %s excluded", Count(int(o.Excluded)))
	}
	if o.NonIceberg > 0 {
		how := "reported only"
		if o.IncludeNonIceberg {
			how = "included"
		}
		fmt.Fprintf(&b, "; %s %s", countOf(o.NonIceberg, "non-Iceberg file", "non-Iceberg files"), how)
	}
	if st := o.Staging; st != nil {
		fmt.Fprintf(&b, "; %s of other engines not entered (%s, %s; first: %s)",
			countOf(st.Dirs, "staging directory", "staging directories"), countOf(st.Files, "file", "files"), Bytes(st.Bytes), strings.Join(st.Examples, ", "))
	}
	if f := o.Foreign; f != nil {
		fmt.Fprintf(&b, "; %s other tables reference kept (%s; by %s; first: %s)",
			countOf(f.Files, "file", "files"), Bytes(f.Bytes), strings.Join(f.Tables, ", "), strings.Join(f.Examples, ", "))
	}
	if o.MaxRatio > 0 {
		fmt.Fprintf(&b, "; %.1f%% unreferenced (max %g%%)", o.Ratio*100, o.MaxRatio*100)
	}
	if o.Quarantine != "" {
		fmt.Fprintf(&b, "; moved to quarantine for %s", o.Quarantine)
	}
	return b.String()
}

// purgeSentence is the quarantine runs a plan deletes, with the day the
// newest of them was quarantined (its grace period is over).
func purgeSentence(runs []diff.PurgeRun) string {
	var files, bytes, newest int64
	for _, r := range runs {
		files += r.Files
		bytes += r.Bytes
		newest = max(newest, r.CreatedAtMs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "purge %s (%s, %s)", countOf(len(runs), "quarantine run", "quarantine runs"),
		countOf(files, "file", "files"), Bytes(bytes))
	if newest > 0 {
		fmt.Fprintf(&b, " quarantined on or before %s", time.UnixMilli(newest).UTC().Format(time.DateOnly))
	}
	return b.String()
}

func quoteAll(items []string) []string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return q
}

// PlanProblems prints a plan's errors and the warnings only a plan finds
// (diff.ListingWarning, and each table's) on w, stderr, whatever the
// document on stdout: a pipeline's log shows them even with -json. An
// error several addresses share (a catalog that cannot be listed) is
// printed once, with the number of tables and selectors it blocked.
// The configuration's own warnings were printed when it was loaded.
func PlanProblems(w io.Writer, p *diff.Plan, s *Styles, compact bool) error {
	var b strings.Builder
	for _, wn := range p.Warnings {
		if !diff.ListingWarning(wn.Code) {
			continue
		}
		line := s.Warn("Warning:") + " " + wn.Code + ": " + wn.Message
		if wn.Origin != "" {
			line += s.Dim(" (" + wn.Origin + ")")
		}
		b.WriteString(line + "\n")
		if wn.Detail != "" {
			b.WriteString("  " + wn.Detail + "\n")
		}
		b.WriteString("\n")
	}
	writeWarnings(&b, p, s, compact)
	var errs, refusals grouped
	for _, e := range p.Errors {
		errs.add(e.Message, e.Address)
	}
	for _, r := range refusalsOf(p) {
		refusals.add(string(r.Action)+" refused: "+r.Reason, r.Address)
	}
	errs.write(&b, "could not be planned", s)
	refusals.write(&b, "", s)
	_, err := io.WriteString(w, b.String())
	return err
}

// grouped is messages with the addresses that share each, in first-seen
// order.
type grouped struct {
	order []string
	addrs map[string][]string
}

func (g *grouped) add(msg, addr string) {
	if g.addrs == nil {
		g.addrs = map[string][]string{}
	}
	if _, ok := g.addrs[msg]; !ok {
		g.order = append(g.order, msg)
	}
	g.addrs[msg] = append(g.addrs[msg], addr)
}

// write prints one "Error:" per message: with its address when one has it,
// else the message and then how many and which addresses it concerns.
func (g *grouped) write(b *strings.Builder, verb string, s *Styles) {
	for _, msg := range g.order {
		addrs := g.addrs[msg]
		if len(addrs) == 1 {
			if verb != "" {
				msg = verb + ": " + msg
			}
			fmt.Fprintf(b, "%s %s: %s\n", s.Refuse("Error:"), addrs[0], msg)
			continue
		}
		what := erredCount(addrs, len(addrs))
		if verb != "" {
			what += " " + verb
		}
		fmt.Fprintf(b, "%s %s\n  %s: %s\n", s.Refuse("Error:"), msg, what, strings.Join(addrs, ", "))
	}
}

func writeWarnings(b *strings.Builder, p *diff.Plan, s *Styles, compact bool) {
	n := 0
	for i := range p.Tables {
		n += len(p.Tables[i].Warnings)
	}
	if n == 0 {
		return
	}
	b.WriteString(s.Warn("Warnings:") + "\n")
	if compact {
		// One line per code, naming the tables: the same warning on 40
		// tables is one fact.
		var codes []string
		tables := map[string][]string{}
		for i := range p.Tables {
			for _, w := range p.Tables[i].Warnings {
				if _, ok := tables[w.Code]; !ok {
					codes = append(codes, w.Code)
				}
				if ts := tables[w.Code]; len(ts) == 0 || ts[len(ts)-1] != p.Tables[i].Address {
					tables[w.Code] = append(ts, p.Tables[i].Address)
				}
			}
		}
		for _, code := range codes {
			fmt.Fprintf(b, "  %s %s: %s\n", s.Warn("!"), warningLabel(code), strings.Join(tables[code], ", "))
		}
		b.WriteString("\n")
		return
	}
	for i := range p.Tables {
		t := &p.Tables[i]
		for _, w := range t.Warnings {
			line := fmt.Sprintf("  %s %s %s: %s", s.Warn("!"), w.Code, t.Address, w.Message)
			if w.Origin != "" {
				line += s.Dim(" (" + w.Origin + ")")
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\n")
}

// NoTableManaged is the error of a plan of a configuration that manages
// no table at all (its warnings say what matched nothing).
const NoTableManaged = "no table is managed by this configuration"

// warningLabel is a code with the name of its warning: "IW107
// orphan_age_below_commit_gap".
func warningLabel(code string) string {
	if l, ok := config.LookupLint(code); ok {
		return code + " " + l.Name
	}
	return code
}

// Summary is the plan's last line. Its figures are the ones diff.Summarize
// puts in the JSON summary (a table with refusals counts as an error, not
// as changed), so `plan -json | jq .summary` always agrees with the text.
func Summary(p *diff.Plan, s *Styles) string {
	sum := summarize(p)
	if sum.Actions == 0 && sum.Errors == 0 {
		if sum.Tables == 0 && len(p.Targets) > 0 {
			return s.Bold(fmt.Sprintf("No changes. No managed table matches -target %s.", strings.Join(quoteAll(p.Targets), ", ")))
		}
		if sum.Tables == 0 {
			return s.Refuse("Error:") + " " + NoTableManaged + "."
		}
		if sum.Tables == 1 {
			// "All 1 table is" reads as a slip.
			return s.Bold("No changes. 1 table is in policy.")
		}
		return s.Bold(fmt.Sprintf("No changes. All %s tables are in policy.", Count(sum.Tables)))
	}
	rest := fmt.Sprintf("%s in policy", countOf(sum.TablesInPolicy, "table", "tables"))
	if sum.Actions > 0 {
		rest = fmt.Sprintf("%s %s to change (%s, %s destructive), %s.", s.Bold("Plan:"),
			countOf(sum.TablesChanged, "table", "tables"), countOf(sum.Actions, "action", "actions"),
			Count(sum.DestructiveActions), rest)
	}
	if sum.Errors == 0 {
		return rest
	}
	// Errors come first and the line never says "No changes": a plan with
	// errors is not the whole picture.
	line := s.Refuse("Error:") + " " + failureSentence(p, sum) + "."
	if sum.Actions > 0 {
		return line + " " + rest
	}
	if sum.TablesInPolicy > 0 {
		return line + " " + rest + "."
	}
	return line
}

// failureSentence says what has errors: "3 tables could not be planned",
// "1 selector could not be listed" (a tables selector of a catalog that
// could not be listed: its error has the pattern for an address, and a
// pattern is not a table), "1 table has refused actions", joined by "; ".
func failureSentence(p *diff.Plan, sum diff.Summary) string {
	var addrs []string
	failed := map[string]bool{}
	for _, e := range p.Errors {
		if !failed[e.Address] {
			failed[e.Address] = true
			addrs = append(addrs, e.Address)
		}
	}
	refused := sum.Errors - len(addrs)
	var parts []string
	if len(addrs) > 0 {
		parts = append(parts, erredCount(addrs, len(addrs))+" could not be planned")
	}
	if refused > 0 {
		parts = append(parts, countOf(refused, "table", "tables")+plural(refused, " has", " have")+" refused actions")
	}
	return strings.Join(parts, "; ")
}

// erredCount says what n addresses are: "3 tables", or "1 table and 2
// selectors" when some are tables selectors (their pattern has a *).
func erredCount(addrs []string, n int) string {
	selectors := 0
	for _, a := range addrs {
		if strings.Contains(a, "*") {
			selectors++
		}
	}
	tables := n - selectors
	switch {
	case selectors == 0:
		return countOf(tables, "table", "tables")
	case tables == 0:
		return countOf(selectors, "selector", "selectors")
	}
	return countOf(tables, "table", "tables") + " and " + countOf(selectors, "selector", "selectors")
}

// summarize computes the summary with diff.Summarize on a copy, so a plan
// read from a file whose summary was edited still prints the truth.
func summarize(p *diff.Plan) diff.Summary {
	cp := *p
	diff.Summarize(&cp)
	return cp.Summary
}
