package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// ForceUnlock: `icewright force-unlock [-force] [-var...] RUN_ID ADDR`.
type ForceUnlock struct {
	Force   bool
	NoColor bool
	Vars    Vars
	RunID   string
	Address string
}

func ParseForceUnlock(args []string) (ForceUnlock, error) {
	var a ForceUnlock
	fs := newFlagSet("force-unlock")
	fs.BoolVar(&a.Force, "force", false, "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	var err error
	a.RunID, a.Address, err = runAndAddress(fs, "force-unlock needs the run id of the lease and a table address: icewright force-unlock RUN_ID CATALOG.NAMESPACE.TABLE")
	return a, err
}

const unlockPrompt = "Do you really want to remove this lease? Only 'yes' will be accepted: "

// forceUnlock removes one run's lease from one table, as Terraform's
// force-unlock: for a lease whose run is known to be dead and which should
// not wait out its TTL. The run id must be given, so a lease taken since
// by a live run is never removed by mistake.
func (c *cli) forceUnlock(args []string) int {
	a, err := ParseForceUnlock(args)
	if err != nil {
		return c.usage("force-unlock", err)
	}
	c.noColor = c.noColor || a.NoColor
	if _, _, _, err := config.SplitAddress(a.Address); err != nil {
		return c.fail(fmt.Errorf("force-unlock %q: %w", a.Address, err))
	}
	if !a.Force && !c.stdinTTY {
		return c.fail(errors.New("force-unlock asks for confirmation, but standard input is not a terminal: nothing was changed.\nRun with -force if you are sure the run holding the lease is gone"))
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
	if !a.Force {
		fmt.Fprintf(c.stderr, "icewright will remove the lease of run %s on %s. The run holding it may still be working on the table; if it is, two applies may then work on the table at once (each action still commits optimistically).\n", a.RunID, a.Address)
		ok, err := c.confirm(unlockPrompt)
		if err != nil {
			return c.fail(err)
		}
		if !ok {
			fmt.Fprintln(c.stderr, "force-unlock cancelled: nothing was changed.")
			return exitError
		}
	}
	l, err := sess.ForceUnlock(ctx, a.Address, a.RunID)
	if err != nil {
		return c.fail(fmt.Errorf("force-unlock %s %s: %w", a.RunID, a.Address, err))
	}
	fmt.Fprintf(c.stdout, "Removed the lease of run %s on %s (held by %s since %s, until %s).\n",
		l.RunID, a.Address, l.Owner, l.Since.UTC().Format(time.RFC3339), l.ExpiresAt.UTC().Format(time.RFC3339))
	return exitOK
}
