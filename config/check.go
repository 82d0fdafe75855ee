package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// checkReferences reports policy references to undeclared policies and
// table addresses or patterns whose catalog is not declared.
func (l *loader) checkReferences() {
	names := make([]string, 0, len(l.cfg.Policies))
	for n := range l.cfg.Policies {
		names = append(names, n)
	}
	sort.Strings(names)
	ref := func(name string, rng hcl.Range, what string) {
		if name == "" {
			return
		}
		if _, ok := l.cfg.Policies[name]; ok {
			return
		}
		detail := fmt.Sprintf("%s refers to policy.%s, but no policy %q is declared.", what, name, name)
		if sug := nameSuggestion(name, names); sug != "" {
			detail += fmt.Sprintf(" Did you mean policy.%s?", sug)
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reference to undeclared policy", Detail: detail, Subject: rng.Ptr()})
	}
	for _, n := range names {
		p := l.cfg.Policies[n]
		ref(p.Extends, p.ExtendsRng, fmt.Sprintf("policy %q", n))
	}
	for _, t := range l.cfg.Tables {
		ref(t.Policy, t.PolicyRng, fmt.Sprintf("table %q", t.Address))
	}
	for _, t := range l.cfg.Selectors {
		ref(t.Policy, t.PolicyRng, fmt.Sprintf("tables %q", t.Pattern))
	}

	catalogs := make([]string, 0, len(l.cfg.Catalogs))
	for _, c := range l.cfg.Catalogs {
		catalogs = append(catalogs, c.Name)
	}
	undeclared := func(first string, rng hcl.Range, what string) {
		detail := fmt.Sprintf("%s names the catalog %q, but no catalog %q is declared.", what, first, first)
		if sug := nameSuggestion(first, catalogs); sug != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sug)
		} else if len(catalogs) > 0 {
			detail += fmt.Sprintf(" Declared catalogs: %s.", quoteList(catalogs))
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared catalog", Detail: detail, Subject: rng.Ptr()})
	}
	for _, t := range l.cfg.Tables {
		cat, _, _, _ := SplitAddress(t.Address)
		if l.cfg.CatalogByName(cat) == nil {
			undeclared(cat, l.labelRanges[t], fmt.Sprintf("table %q", t.Address))
		}
	}
	for _, t := range l.cfg.Selectors {
		first, _, _ := strings.Cut(t.Pattern, ".")
		if first == "**" {
			continue
		}
		matched := false
		for _, c := range catalogs {
			if MatchPattern(first, c) {
				matched = true
				break
			}
		}
		if !matched {
			undeclared(first, l.labelRanges[t], fmt.Sprintf("tables %q", t.Pattern))
		}
	}
}

// checkCycles reports each extends cycle once, naming the whole chain.
func (l *loader) checkCycles() {
	names := make([]string, 0, len(l.cfg.Policies))
	for n := range l.cfg.Policies {
		names = append(names, n)
	}
	sort.Strings(names)
	reported := map[string]bool{}
	for _, start := range names {
		var chain []string
		pos := map[string]int{}
		for n := start; n != ""; {
			p, ok := l.cfg.Policies[n]
			if !ok {
				break
			}
			if i, seen := pos[n]; seen {
				cycle := chain[i:]
				members := append([]string(nil), cycle...)
				sort.Strings(members)
				k := strings.Join(members, "\x00")
				if !reported[k] {
					reported[k] = true
					// Point at the extends of the alphabetically first member, so
					// the report does not depend on where the walk started.
					first := l.cfg.Policies[members[0]]
					j := indexOf(cycle, members[0])
					ordered := append(append([]string(nil), cycle[j:]...), cycle[:j]...)
					ordered = append(ordered, members[0])
					l.errorf(first.ExtendsRng.Ptr(), "Policy inheritance cycle",
						"The extends chain loops: %s.", "policy "+strings.Join(ordered, " extends "))
				}
				break
			}
			pos[n] = len(chain)
			chain = append(chain, n)
			n = p.Extends
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// checkSelectors reports every pair of tables blocks that could match one
// address after their excludes, from the patterns alone.
func (l *loader) checkSelectors() {
	sel := l.cfg.Selectors
	for _, p := range selectorPairs(sel) {
		{
			a, b := sel[p[0]], sel[p[1]]
			example, overlap, decided := selectorsOverlap(
				selectorLanguage{a.Pattern, a.Exclude},
				selectorLanguage{b.Pattern, b.Exclude})
			if !overlap {
				continue
			}
			rng := l.labelRanges[b]
			if !decided {
				l.errorf(rng.Ptr(), "Table selectors too complex to check",
					"Could not prove that tables %q and tables %q (%s) never match the same table. Simplify the patterns or add excludes.", b.Pattern, a.Pattern, a.DeclRange)
				continue
			}
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Overlapping table selectors",
				Detail: fmt.Sprintf("tables %q and tables %q (declared at %s) can both match the same table, for example %q. "+
					"A table may get its policy from one selector only: add an exclude to one of them, or use a table block for the shared tables.",
					b.Pattern, a.Pattern, a.DeclRange, example),
				Subject: rng.Ptr(),
			})
		}
	}
}

// checkEffective checks rules that depend on the merged policy of each
// table and tables block rather than on one attribute: a sort strategy
// without a sort order, zorder without columns, file-size bounds that
// contradict the target, and a property both set and removed. Each finding
// is reported once even when several blocks share the policy.
func (l *loader) checkEffective() {
	if l.diags.HasErrors() {
		// Merging on top of a broken configuration repeats its errors.
		return
	}
	seen := map[string]bool{}
	// code is the lint code of a warning, "" for an error.
	report := func(code string, rng hcl.Range, summary, detail string) {
		k := fmt.Sprintf("%s|%s|%d|%d", summary, rng.Filename, rng.Start.Line, rng.Start.Column)
		if seen[k] {
			return
		}
		seen[k] = true
		if code != "" {
			l.diags = append(l.diags, lintWarning(code, rng.Ptr(), summary, detail))
			return
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
	}
	// Two bodies reused for every block: a PolicyBody is 4.6 KB, and a
	// configuration can have 250,000 table blocks.
	var body, pb PolicyBody
	check := func(policy string, what string) {
		l.cfg.mergedInto(&pb, &body, policy)
		c := pb.Compaction
		if c.Declared && c.Strategy.Value == "sort" && len(pb.SortOrder.Value) == 0 {
			rng := c.Strategy.Origin
			if !c.Strategy.Set {
				rng = c.DeclRange
			}
			report(LintSortWithoutOrder, rng, "Sort strategy without a sort order",
				fmt.Sprintf("%s compacts with strategy \"sort\" but its policy has no sort_order, so the result depends on the sort order the table happens to have, and the plan refuses the compaction of a table that has none. Add sort_order = [...] to make the order part of the policy.", what))
		}
		if c.Declared && c.Strategy.Value == "zorder" && len(c.ZOrderColumns.Value) < 2 {
			report("", c.Strategy.Origin, "Z-order needs columns",
				fmt.Sprintf("%s compacts with strategy \"zorder\", which needs zorder_columns with at least two columns.", what))
		}
		if c.Declared && c.MinFileSize.Value >= pb.TargetFileSize.Value && c.MinFileSize.Set {
			report("", c.MinFileSize.Origin, "min_file_size not below the target",
				fmt.Sprintf("%s: min_file_size (%s) must be smaller than target_file_size (%s).", what, FormatSize(c.MinFileSize.Value), FormatSize(pb.TargetFileSize.Value)))
		}
		if c.Declared && c.MaxFileSize.Value <= pb.TargetFileSize.Value && c.MaxFileSize.Set {
			report("", c.MaxFileSize.Origin, "max_file_size not above the target",
				fmt.Sprintf("%s: max_file_size (%s) must be larger than target_file_size (%s).", what, FormatSize(c.MaxFileSize.Value), FormatSize(pb.TargetFileSize.Value)))
		}
		if ag := pb.PartitionAgeing; ag.Declared && slices.Index(AgeingGrains, ag.From.Value) >= slices.Index(AgeingGrains, ag.To.Value) {
			rng := ag.To.Origin
			if !ag.To.Set {
				rng = ag.From.Origin
			}
			report("", rng, "partition_ageing not to a coarser transform",
				fmt.Sprintf("%s ages %q partitions to %q: to must be coarser than from (hour, day, month, year); a rewrite merges partitions, it never splits them.", what, ag.From.Value, ag.To.Value))
		}
		if gc, ok := pb.Properties["gc.enabled"]; ok && strings.EqualFold(gc.Value, "false") && (pb.SnapshotRetention.Declared || pb.OrphanFiles.Declared) {
			report(LintGCDisabled, gc.Origin, "gc.enabled=false with an expiry or orphan policy",
				fmt.Sprintf("%s sets gc.enabled = \"false\", so Iceberg forbids deleting its files: snapshot expiry and orphan removal will be refused on it. Remove one or the other.", what))
		}
		for _, k := range pb.RemoveProperties.Value {
			if s, ok := pb.Properties[k]; ok {
				report("", pb.RemoveProperties.Origin, "Property both set and removed",
					fmt.Sprintf("%s sets %q (at %s) and also lists it in remove_properties.", what, k, s.Origin))
			}
			if owner, ok := ownedProperty(k); ok {
				if _, set := derivedProperties(&pb)[k]; set {
					report("", pb.RemoveProperties.Origin, "Property both set and removed",
						fmt.Sprintf("%s sets %q through %s and also lists it in remove_properties.", what, k, owner))
				}
			}
		}
	}
	for _, t := range l.cfg.Tables {
		t.BodyInto(&body)
		check(t.Policy, fmt.Sprintf("table %q", t.Address))
	}
	for _, t := range l.cfg.Selectors {
		body = t.Body
		check(t.Policy, fmt.Sprintf("tables %q", t.Pattern))
	}
}

// selectorPairs lists the pairs (i < j, in order) of selectors that can
// overlap at all, without comparing every pair: a pattern's leading
// literal levels (before the first level with a '*') must agree with the
// other's wherever both have one. So each selector is compared only with
// those whose literal prefix is a prefix of its own or equal to it: with
// thousands of selectors on distinct namespaces this is linear, where
// all pairs took minutes.
func selectorPairs(sel []*TablesBlock) [][2]int {
	prefixes := make([][]string, len(sel))
	byPrefix := map[string][]int{}
	for i, s := range sel {
		var lit []string
		for _, seg := range strings.Split(s.Pattern, ".") {
			if strings.Contains(seg, "*") {
				break
			}
			lit = append(lit, seg)
		}
		prefixes[i] = lit
		k := strings.Join(lit, "\x00")
		byPrefix[k] = append(byPrefix[k], i)
	}
	seen := map[[2]int]bool{}
	var pairs [][2]int
	for i, lit := range prefixes {
		for n := 0; n <= len(lit); n++ {
			for _, j := range byPrefix[strings.Join(lit[:n], "\x00")] {
				if j == i || (n == len(lit) && j > i) {
					continue // the same node pairs once, from its later member
				}
				p := [2]int{min(i, j), max(i, j)}
				if !seen[p] {
					seen[p] = true
					pairs = append(pairs, p)
				}
			}
		}
	}
	sort.Slice(pairs, func(a, b int) bool {
		if pairs[a][0] != pairs[b][0] {
			return pairs[a][0] < pairs[b][0]
		}
		return pairs[a][1] < pairs[b][1]
	})
	return pairs
}
