//go:build !iceops_pending

package main

import "errors"

// Commands whose packages have not landed yet. Each is replaced by its own
// file (validate.go, plan.go, ...) as config, providers and apply arrive.
// They still parse their arguments, so -help works.

var errPending = errors.New("not implemented yet")

func (c *cli) pending(cmd string, err error) int {
	if err != nil {
		return c.usage(cmd, err)
	}
	return c.fail(errPending)
}

func (c *cli) apply(args []string) int {
	_, err := ParseApply(args)
	return c.pending("apply", err)
}
func (c *cli) show(args []string) int { _, err := ParseShow(args); return c.pending("show", err) }
func (c *cli) inspect(args []string) int {
	_, err := ParseInspect(args)
	return c.pending("inspect", err)
}
func (c *cli) demo(args []string) int { _, err := ParseDemo(args); return c.pending("demo", err) }
func (c *cli) plan(args []string) int {
	_, err := ParsePlan(args)
	return c.pending("plan", err)
}
