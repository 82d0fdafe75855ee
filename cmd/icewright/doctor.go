package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/doctor"
)

// Doctor: `icewright doctor [-json] [-catalog=NAME] [-var...] [-no-color]
// [SELECTOR...]`.
type Doctor struct {
	JSON      bool
	Catalog   string
	Vars      Vars
	NoColor   bool
	Selectors []string
}

func ParseDoctor(args []string) (Doctor, error) {
	var a Doctor
	fs := newFlagSet("doctor")
	fs.BoolVar(&a.JSON, "json", false, "")
	fs.StringVar(&a.Catalog, "catalog", "", "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	a.Selectors = fs.Args()
	return a, nil
}

// doctor checks what icewright needs of each catalog, its storage and its
// tables, one finding a line; any failure exits 1, warnings do not.
func (c *cli) doctor(args []string) int {
	a, err := ParseDoctor(args)
	if err != nil {
		return c.usage("doctor", err)
	}
	c.noColor = c.noColor || a.NoColor
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
	rep, err := doctor.Run(ctx, sess, doctor.Options{Catalog: a.Catalog, Selectors: a.Selectors})
	if err != nil {
		return c.fail(err)
	}
	if a.JSON {
		err = views.DoctorJSON(c.stdout, rep)
	} else {
		err = views.Doctor(c.stdout, rep, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	if rep.Failures > 0 {
		return exitError
	}
	return exitOK
}
