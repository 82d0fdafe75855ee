package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// decodeEngine reads an `engine "NAME"` block (docs/engines.md). The label
// is the engine's kind; only the engines icewright can drive are accepted.
func (l *loader) decodeEngine(b *hcl.Block) {
	name := b.Labels[0]
	if !contains(engineNames, name) {
		detail := fmt.Sprintf("%q is not an engine icewright can delegate to; use one of %s (compaction without an engine block runs in icewright itself, engine \"local\").", name, quoteList(engineNames))
		if sug := nameSuggestion(name, engineNames); sug != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sug)
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown engine", Detail: detail, Subject: b.LabelRanges[0].Ptr()})
		return
	}
	if prev := l.cfg.Engine(name); prev != nil {
		l.errorf(b.DefRange.Ptr(), "Duplicate engine", "An engine named %q was already declared at %s.", name, prev.DeclRange)
		return
	}
	content, diags := b.Body.Content(engineSchema)
	l.diags = append(l.diags, diags...)
	e := &Engine{Name: name, DeclRange: b.DefRange}
	if a, ok := content.Attributes["remote"]; ok {
		// The URL's form is the engine's (providers/engine checks it with
		// the configuration); its secrets are masked from here on.
		if s, ok := l.evalString(a); ok {
			l.cfg.Secrets.addURL(s)
			e.Remote, e.RemoteRange = s, a.Expr.Range()
		}
	}
	if a, ok := content.Attributes["catalog"]; ok {
		if s, ok := l.evalString(a); ok {
			e.Catalog = s
			if s == "" || strings.ContainsAny(s, "`. \t") {
				l.errorf(a.Expr.Range().Ptr(), "Invalid engine catalog", "catalog is the engine's name of one catalog; %q cannot be one (empty, or with dots, spaces or backticks).", s)
			}
		}
	}
	l.cfg.Engines = append(l.cfg.Engines, e)
}

// checkEngines: a compaction.engine names "local" or a declared engine
// (an error at the attribute), and an engine no block names is a warning,
// since it does nothing.
func (l *loader) checkEngines() {
	used := map[string]bool{}
	check := func(pb *PolicyBody) {
		s := pb.Compaction.Engine
		if !s.Set {
			return
		}
		used[s.Value] = true
		if s.Value == LocalEngine || l.cfg.Engine(s.Value) != nil {
			return
		}
		names := []string{LocalEngine}
		for _, e := range l.cfg.Engines {
			names = append(names, e.Name)
		}
		detail := fmt.Sprintf("compaction.engine is %q, but no engine block declares it; use one of %s, or declare `engine %q { remote = ... }`.", s.Value, quoteList(names), s.Value)
		if sug := nameSuggestion(s.Value, names); sug != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sug)
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown engine", Detail: detail, Subject: s.Origin.Ptr()})
	}
	for _, name := range slices.Sorted(maps.Keys(l.cfg.Policies)) {
		check(&l.cfg.Policies[name].Body)
	}
	var body PolicyBody
	for _, t := range l.cfg.Tables {
		t.BodyInto(&body)
		check(&body)
	}
	for _, t := range l.cfg.Selectors {
		check(&t.Body)
	}
	for _, e := range l.cfg.Engines {
		if !used[e.Name] {
			l.warnf(LintEngineUnused, e.DeclRange.Ptr(), "Engine not used",
				"engine %q is declared, but no policy, table or tables block sets compaction.engine = %q: nothing is delegated to it.", e.Name, e.Name)
		}
	}
}
