package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/icewright/icewright/providers/demo"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// demo builds a local lakehouse with real maintenance debt and a
// configuration for it, then says what to run next.
func (c *cli) demo(args []string) int {
	a, err := ParseDemo(args)
	if err != nil {
		return c.usage("demo", err)
	}
	c.noColor = c.noColor || a.NoColor
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	info, err := demo.Build(ctx, c.path(a.Dir), c.now())
	if err != nil {
		return c.fail(err)
	}
	if err := views.Demo(c.stdout, info, c.shownPath(info.Dir), c.self, c.colorOut()); err != nil {
		return c.fail(err)
	}
	return exitOK
}
