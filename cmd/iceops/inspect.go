package main

import (
	"fmt"

	"github.com/iceops/iceops/cmd/iceops/internal/views"
	"github.com/iceops/iceops/config"
)

// inspect prints the health report of one table of a configured catalog,
// managed or not.
func (c *cli) inspect(args []string) int {
	a, err := ParseInspect(args)
	if err != nil {
		return c.usage("inspect", err)
	}
	c.noColor = c.noColor || a.NoColor
	if _, _, _, err := config.SplitAddress(a.Address); err != nil {
		return c.fail(fmt.Errorf("inspect %q: %w", a.Address, err))
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, sess, done := c.session(cfg)
	defer done()
	in, err := sess.Inspect(ctx, a.Address)
	if err != nil {
		return c.fail(err)
	}
	if a.JSON {
		err = views.InspectJSON(c.stdout, in)
	} else {
		err = views.Inspect(c.stdout, in, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}
