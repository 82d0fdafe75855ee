package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// Restore: `icewright restore [-json] [-var...] RUN_ID ADDR`.
type Restore struct {
	JSON    bool
	NoColor bool
	Vars    Vars
	RunID   string
	Address string
}

func ParseRestore(args []string) (Restore, error) {
	var a Restore
	fs := newFlagSet("restore")
	fs.BoolVar(&a.JSON, "json", false, "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	var err error
	a.RunID, a.Address, err = runAndAddress(fs, "restore needs a quarantine run id and a table address: icewright restore RUN_ID CATALOG.NAMESPACE.TABLE")
	return a, err
}

// runAndAddress takes the two arguments RUN_ID ADDR of restore and
// force-unlock; need says what is missing.
func runAndAddress(fs *flag.FlagSet, need string) (string, string, error) {
	if err := maxArgs(fs, 2, "RUN_ID ADDR"); err != nil {
		return "", "", err
	}
	if fs.NArg() != 2 {
		return "", "", errors.New(need)
	}
	return fs.Arg(0), fs.Arg(1), nil
}

// restore moves the files of one quarantine run back into the table.
func (c *cli) restore(args []string) int {
	a, err := ParseRestore(args)
	if err != nil {
		return c.usage("restore", err)
	}
	c.noColor = c.noColor || a.NoColor
	if _, _, _, err := config.SplitAddress(a.Address); err != nil {
		return c.fail(fmt.Errorf("restore %q: %w", a.Address, err))
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
	res, err := sess.RestoreQuarantine(ctx, a.Address, a.RunID)
	if err != nil {
		return c.fail(fmt.Errorf("restore %s %s: %w", a.RunID, a.Address, err))
	}
	if a.JSON {
		err = views.RestoreJSON(c.stdout, a.Address, res)
	} else {
		err = views.Restore(c.stdout, a.Address, res, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	if len(res.Refused) > 0 || res.ManifestKept != "" {
		return exitError
	}
	return exitOK
}
