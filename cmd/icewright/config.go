package main

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
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
	cfg, diags := c.readConfig(v, lint)
	var files map[string]*hcl.File
	if cfg != nil {
		files = cfg.Files
	}
	views.DiagnosticsWith(c.stderr, files, diags, c.colorErr(), c.compactWarnings)
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			warnings = append(warnings, d)
		}
	}
	return cfg, warnings, cfg != nil && !diags.HasErrors()
}

// readConfig is loadConfig without printing: the configuration and its
// diagnostics (warnings only with lint), for validate -json.
func (c *cli) readConfig(v Vars, lint bool) (*config.Config, hcl.Diagnostics) {
	cfg, diags := config.Load(c.configDir(), config.LoadOptions{
		Vars:     v.Vars,
		VarFiles: v.VarFiles,
		Env:      c.environ,
		Version:  version,
		// validate needs no secrets: an unset env() is unknown there.
		UnsetEnvUnknown: c.validating,
	})
	if cfg != nil {
		// From here on nothing printed may carry a secret of the
		// configuration, diagnostics included.
		c.maskSecrets(cfg.Secrets)
		diags = append(diags, providers.ConfigDiagnostics(cfg, c.now())...)
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
	return cfg, diags
}

// configDir is the configuration directory as the user named it, so that
// diagnostics say "main.icewright.hcl:3:5" (or "examples/quickstart/...:3:5"
// after -chdir) rather than an absolute path.
func (c *cli) configDir() string { return c.shownPath(c.dir) }
