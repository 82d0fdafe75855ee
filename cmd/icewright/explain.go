package main

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
)

// explain prints every effective policy value of one table and the block
// and file:line that set it. It contacts no catalog.
func (c *cli) explain(args []string) int {
	a, err := ParseExplain(args)
	if err != nil {
		return c.usage("explain", err)
	}
	c.noColor = c.noColor || a.NoColor
	if _, _, _, err := config.SplitAddress(a.Address); err != nil {
		return c.fail(fmt.Errorf("explain %q: %w", a.Address, err))
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	s := c.colorOut()
	eff, ok := cfg.Resolve(a.Address)
	if !ok {
		if err := views.NotManaged(c.stdout, a.Address, excludedBy(cfg, a.Address), s); err != nil {
			return c.fail(err)
		}
		// Not an answer a script may read as success (a typo in the
		// address reads the same).
		return exitError
	}
	lines := eff.Explain()
	rows := make([]views.ExplainRow, len(lines))
	for i, l := range lines {
		rows[i] = views.ExplainRow{Name: l.Name, Value: l.Value, Default: l.Default, Unset: l.Unset, Block: l.Block, Origin: rangeString(l.Origin)}
	}
	h := views.ExplainHeader{Address: a.Address, MatchedBy: eff.MatchedBy, MatchedAt: rangeString(eff.MatchRange), Policy: eff.PolicyName}
	var props []views.ExplainProperty
	for _, k := range sortedKeys(eff.DerivedProperties) {
		p := eff.DerivedProperties[k]
		props = append(props, views.ExplainProperty{Key: k, Value: p.Value, Block: p.Block, Origin: rangeString(p.Origin)})
	}
	if err := views.Explain(c.stdout, h, rows, props, s); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// excludedBy says which selectors match addr but exclude it, so "not
// managed" can say why (the rule is config.Config.ExcludedBy).
func excludedBy(cfg *config.Config, addr string) []string {
	var out []string
	for _, ex := range cfg.ExcludedBy(addr) {
		out = append(out, fmt.Sprintf("tables %q (%s) matches it but excludes %q",
			ex.Selector.Pattern, rangeString(ex.Selector.DeclRange), ex.Exclude))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// rangeString renders an hcl.Range as file:line:col, "" when unset.
func rangeString(r hcl.Range) string {
	if r.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}
