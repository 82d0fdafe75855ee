package config

// Exclusion is a tables block whose pattern matches an address but whose
// exclude list carves it out (the reason `explain` gives for a table that
// is not managed).
type Exclusion struct {
	Selector *TablesBlock
	Exclude  string // the exclude pattern that matched
}

// ExcludedBy lists the selectors that would manage addr but for one of
// their excludes, with the first exclude that matched (the match Resolve
// makes, selectorMatches).
func (c *Config) ExcludedBy(addr string) []Exclusion {
	var out []Exclusion
	for _, sel := range c.Selectors {
		if !MatchPattern(sel.Pattern, addr) {
			continue
		}
		for _, ex := range sel.Exclude {
			if MatchPattern(ex, addr) {
				out = append(out, Exclusion{Selector: sel, Exclude: ex})
				break
			}
		}
	}
	return out
}
