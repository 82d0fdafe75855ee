package providers

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/engine"
)

// ConfigDiagnostics are the configuration errors that need providers'
// languages rather than config's: every compaction.where is parsed, so
// that a syntax error is a configuration error with its file:line and
// snippet, found by validate without a catalog, not a plan-time failure of
// each table (docs/design.md §3.5). Column names are checked at plan time,
// against each table's schema. now resolves relative times in the filter.
// A catalog's icewright.delete-* properties (docs/catalogs.md) are checked
// here too, so a malformed one fails validate and plan, not an apply, and
// each engine block's remote by its engine (engine.Diagnostics).
func ConfigDiagnostics(cfg *config.Config, now time.Time) hcl.Diagnostics {
	// Only the where settings are kept, each table block's read through one
	// reused body: a PolicyBody is about 4.6 KB, and there can be 250,000
	// table blocks.
	var wheres []config.Setting[string]
	for _, p := range cfg.Policies {
		wheres = append(wheres, p.Body.Compaction.Where)
	}
	var body config.PolicyBody
	for _, t := range cfg.Tables {
		if t.BodyInto(&body); body.Compaction.Where.Set {
			wheres = append(wheres, body.Compaction.Where)
		}
	}
	for _, t := range cfg.Selectors {
		wheres = append(wheres, t.Body.Compaction.Where)
	}
	var diags hcl.Diagnostics
	for _, w := range wheres {
		if !w.Set {
			continue
		}
		if _, err := compaction.ParseWhere(w.Value, now); err != nil {
			rng := w.Origin
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid compaction.where",
				Detail:   fmt.Sprintf("%v.", err),
				Subject:  &rng,
			})
		}
	}
	for _, c := range cfg.Catalogs {
		_, err := parseDeleteSettings(c.Name, c.Properties)
		if err == nil {
			_, err = parseReadPace(c.Name, c.Properties)
		}
		if err != nil {
			rng := c.DeclRange
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid deletion setting",
				Detail:   fmt.Sprintf("%v.", err),
				Subject:  &rng,
			})
		}
	}
	diags = append(diags, engine.Diagnostics(cfg)...)
	// Policies come from a map: report in file order.
	slices.SortFunc(diags, func(a, b *hcl.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Subject.Filename, b.Subject.Filename), cmp.Compare(a.Subject.Start.Byte, b.Subject.Start.Byte))
	})
	return diags
}
