package main

import "github.com/iceops/iceops/cmd/iceops/internal/views"

// show prints a saved plan, as text or as the same JSON document that
// plan -json printed.
func (c *cli) show(args []string) int {
	a, err := ParseShow(args)
	if err != nil {
		return c.usage("show", err)
	}
	c.noColor = c.noColor || a.NoColor
	p, err := c.readPlanFile(a.PlanFile)
	if err != nil {
		return c.fail(err)
	}
	if a.JSON {
		err = views.PlanJSON(c.stdout, p)
	} else {
		err = views.Plan(c.stdout, p, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}
