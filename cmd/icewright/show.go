package main

// show prints a saved plan, as text, as Markdown, or as the same JSON
// document that plan -json printed.
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
	if err := c.printPlan(p, a.Format); err != nil {
		return c.fail(err)
	}
	return exitOK
}
