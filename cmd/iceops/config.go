package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/iceops/iceops/cmd/iceops/internal/views"
	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers/compaction"
)

// loadConfig reads the configuration of the working directory and prints
// every diagnostic (errors and, with lint, warnings; all at once) on
// stderr. ok is false when there are errors: nothing may be observed then
// (docs/design.md §3.5). Lint warnings belong to validate and plan (docs/design.md §3.6);
// explain and inspect only show errors.
func (c *cli) loadConfig(v Vars, lint bool) (cfg *config.Config, ok bool) {
	cfg, _, ok = c.loadConfigWarnings(v, lint)
	return cfg, ok
}

// loadConfigWarnings is loadConfig that also returns the lint warnings it
// printed, for plan to carry in its document.
func (c *cli) loadConfigWarnings(v Vars, lint bool) (cfg *config.Config, warnings hcl.Diagnostics, ok bool) {
	cfg, diags := config.Load(c.configDir(), config.LoadOptions{
		Vars:     v.Vars,
		VarFiles: v.VarFiles,
		Env:      c.environ,
		Version:  version,
	})
	var files map[string]*hcl.File
	if cfg != nil {
		// From here on nothing printed may carry a secret of the
		// configuration, diagnostics included.
		c.maskSecrets(cfg.Secrets)
		files = cfg.Files
		diags = append(diags, c.whereDiagnostics(cfg)...)
	}
	if !lint {
		var errs hcl.Diagnostics
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				errs = append(errs, d)
			}
		}
		diags = errs
	}
	views.Diagnostics(c.stderr, files, diags, c.colorErr())
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			warnings = append(warnings, d)
		}
	}
	return cfg, warnings, cfg != nil && !diags.HasErrors()
}

// configDir is the configuration directory as the user named it, so that
// diagnostics say "main.iceops.hcl:3:5" (or "examples/quickstart/...:3:5"
// after -chdir) rather than an absolute path.
func (c *cli) configDir() string { return c.shownPath(c.dir) }

// whereDiagnostics parses every compaction.where of the configuration, so
// that a syntax error is a configuration error with its file:line and
// snippet, found by validate without a catalog, not a plan-time failure of
// each table. Column names are checked at plan time, against each table's
// schema.
func (c *cli) whereDiagnostics(cfg *config.Config) hcl.Diagnostics {
	var bodies []*config.PolicyBody
	for _, p := range cfg.Policies {
		bodies = append(bodies, &p.Body)
	}
	for _, t := range cfg.Tables {
		bodies = append(bodies, &t.Body)
	}
	for _, t := range cfg.Selectors {
		bodies = append(bodies, &t.Body)
	}
	var diags hcl.Diagnostics
	for _, b := range bodies {
		w := b.Compaction.Where
		if !w.Set {
			continue
		}
		if _, err := compaction.ParseWhere(w.Value, c.now()); err != nil {
			rng := w.Origin
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid compaction.where",
				Detail:   fmt.Sprintf("%v.", err),
				Subject:  &rng,
			})
		}
	}
	// Policies come from a map: report in file order.
	slices.SortFunc(diags, func(a, b *hcl.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Subject.Filename, b.Subject.Filename), cmp.Compare(a.Subject.Start.Byte, b.Subject.Start.Byte))
	})
	return diags
}
