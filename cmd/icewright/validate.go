package main

import (
	"fmt"
	"strings"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// validate checks the configuration without contacting any catalog.
func (c *cli) validate(args []string) int {
	a, err := ParseValidate(args)
	if err != nil {
		return c.usage("validate", err)
	}
	c.noColor = c.noColor || a.NoColor
	c.compactWarnings = a.CompactWarnings
	c.validating = true
	if a.JSON {
		// As terraform validate -json: the document is the whole output,
		// and the exit code says whether it is valid.
		cfg, diags := c.readConfig(a.Vars, true)
		if err := views.WriteValidateJSON(c.stdout, diags); err != nil {
			return c.fail(err)
		}
		if cfg == nil || diags.HasErrors() {
			return exitError
		}
		return exitOK
	}
	cfg, ok := c.loadConfig(a.Vars, true)
	if !ok {
		return exitError
	}
	s := c.colorOut()
	fmt.Fprintf(c.stdout, "%s The configuration is valid: %s.\n", s.OK("Success!"), views.ConfigSummary(cfg))
	if len(cfg.UnsetEnv) > 0 {
		// Validate needs no secrets; say what it could not check.
		fmt.Fprintf(c.stdout, "Unset environment variables (what depends on them was not checked; plan and apply need them): %s.\n",
			strings.Join(cfg.UnsetEnv, ", "))
	}
	return exitOK
}
