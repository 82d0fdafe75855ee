package main

import (
	"fmt"

	"github.com/iceops/iceops/cmd/iceops/internal/views"
)

// validate checks the configuration without contacting any catalog.
func (c *cli) validate(args []string) int {
	a, err := ParseValidate(args)
	if err != nil {
		return c.usage("validate", err)
	}
	c.noColor = c.noColor || a.NoColor
	cfg, ok := c.loadConfig(a.Vars, true)
	if !ok {
		return exitError
	}
	s := c.colorOut()
	fmt.Fprintf(c.stdout, "%s The configuration is valid: %s.\n", s.OK("Success!"), views.ConfigSummary(cfg))
	return exitOK
}
