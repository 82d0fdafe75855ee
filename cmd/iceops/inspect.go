package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/iceops/iceops/cmd/iceops/internal/views"
	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
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
