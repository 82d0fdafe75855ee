package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/diff/planfile"
	"github.com/icewright/icewright/providers"
)

// plan observes every managed table and prints what must change.
func (c *cli) plan(args []string) int {
	a, err := ParsePlan(args)
	if err != nil {
		return c.usage("plan", err)
	}
	c.noColor = c.noColor || a.NoColor
	c.compactWarnings = a.CompactWarnings
	cfg, warnings, ok := c.loadConfigWarnings(a.Vars, true)
	if !ok {
		if a.Format == FormatMarkdown {
			// A pull request's comment says the plan failed, in place
			// of the last plan's (examples/ci/icewright-ci.sh).
			cfg, diags := c.readConfig(a.Vars, false)
			var files map[string]*hcl.File
			if cfg != nil {
				files = cfg.Files
			}
			if err := views.ConfigErrorsMarkdown(c.stdout, files, diags); err != nil {
				return c.fail(err)
			}
		}
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
	p, err := c.makePlan(ctx, cfg, sess, a.Targets, a.Parallelism, warnings)
	if err != nil {
		return c.fail(err)
	}
	code := planExitCode(p, a.DetailedExitCode)
	// As Terraform, a plan with errors is never saved: apply would do
	// part of what the configuration asks and say it is done.
	save := a.Out != "" && code != exitError
	if save {
		if err := planfile.Save(c.path(a.Out), p); err != nil {
			return c.fail(err)
		}
	}
	if err := c.printPlan(p, a.Format); err != nil {
		return c.fail(err)
	}
	c.reportPlanProblems(p)
	if a.Out != "" && !save {
		views.Error(c.stderr, fmt.Errorf("the plan has errors, so it was not saved to %s", a.Out), c.colorErr())
	}
	if save && a.Format == FormatText {
		fmt.Fprintf(c.stdout, "\nSaved the plan to: %s\n", a.Out)
		if !c.inAutomation() {
			// The plan file's path is relative to -chdir's directory,
			// so the command needs the same -chdir.
			global := ""
			if c.chdir != "" {
				global = "-chdir=" + views.ShellQuote(c.chdir) + " "
			}
			fmt.Fprintf(c.stdout, "\nTo perform exactly these actions, run:\n  icewright %sapply %s\n", global, views.ShellQuote(a.Out))
		}
	}
	return code
}

// reportPlanProblems prints a plan's errors and warnings on stderr
// (views.PlanProblems), whatever -format put on stdout, and the error of a
// configuration that manages no table.
func (c *cli) reportPlanProblems(p *diff.Plan) {
	_ = views.PlanProblems(c.stderr, p, c.colorErr(), c.compactWarnings) // stderr: nowhere to report to
	if managesNothing(p) {
		views.Error(c.stderr, errors.New(noTableManagedError), c.colorErr())
	}
}

// noTableManagedError is the error of a plan that manages no table.
const noTableManagedError = views.NoTableManaged + ` (check the catalogs' labels and the tables selectors; "icewright validate" lists what the configuration declares)`

// managesNothing is a plan of every table (no -target) that found none:
// an error, not a green "no changes" (a wrong catalog label, a selector
// typo).
func managesNothing(p *diff.Plan) bool {
	return len(p.Targets) == 0 && p.Summary.Tables == 0
}

// printPlan renders a plan on stdout in one of the -format views; all
// three are rendered from the same diff.Plan.
func (c *cli) printPlan(p *diff.Plan, format string) error {
	switch format {
	case FormatJSON:
		// The JSON view is the plan document itself, byte for byte what
		// plan -out saves.
		if managesNothing(p) {
			// Exit 1 with an error a pipeline can read, not "errors": []
			// (such a plan is never saved).
			cp := *p
			cp.Errors = append(slices.Clone(p.Errors), diff.TableError{Message: noTableManagedError})
			cp.Summary.Errors++
			p = &cp
		}
		return planfile.Write(c.stdout, p)
	case FormatMarkdown:
		return views.PlanMarkdown(c.stdout, p)
	default:
		return views.Plan(c.stdout, p, c.colorOut())
	}
}

// liveProgress is whether progress redraws lines in place: only on a
// terminal stderr that understands cursor movement (not TERM=dumb).
func (c *cli) liveProgress() bool { return c.stderrTTY && c.env["TERM"] != "dumb" }

// inAutomation is ICEWRIGHT_IN_AUTOMATION (as Terraform's TF_IN_AUTOMATION):
// any non-empty value drops the "run this next" hints, which name commands
// a pipeline user does not type.
func (c *cli) inAutomation() bool { return c.env["ICEWRIGHT_IN_AUTOMATION"] != "" }

// planExitCode is docs/design.md §1: 1 when any table could not be planned (or a
// safety rule refused an action, which someone must look at); with
// -detailed-exitcode 2 when there are changes and 0 when there are none.
func planExitCode(p *diff.Plan, detailed bool) int {
	s := p.Summary
	if s.Errors > 0 || len(p.Errors) > 0 || managesNothing(p) {
		return exitError
	}
	if detailed && s.Actions > 0 {
		return exitChanges
	}
	return exitOK
}

// makePlan plans every managed table, with live observation progress on
// a terminal stderr, and in a log (no terminal) a timestamped line per
// catalog connected and table observed, and every 10 s one per catalog or
// table still waited on: a plan against a catalog that never answers is
// not silent.
func (c *cli) makePlan(ctx context.Context, cfg *config.Config, sess *providers.Session, targets []string, parallelism int, warnings hcl.Diagnostics) (*diff.Plan, error) {
	prog := c.newProgress(false)
	prog.Heartbeat(views.PlanHeartbeatEvery)
	defer prog.Done()
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{
		Targets:        targets,
		Parallelism:    parallelism,
		Now:            c.now,
		Version:        version,
		Progress:       c.logEvents(prog.Event),
		ConfigWarnings: warnings,
		// A plan of a large table keeps its heap near what it holds.
		SetMemoryLimit: memoryLimitSetter(c.env),
	})
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if ctx.Err() != nil {
		// Tables cut short read as errors in the plan; a plan that only
		// says "N tables have errors" would hide that it was interrupted.
		return nil, fmt.Errorf("interrupted while planning: %d of %d tables were planned before the signal; nothing was shown, saved or applied",
			len(p.Tables), len(p.Tables)+len(p.Errors))
	}
	c.logger().Info("plan made", "tables", p.Summary.Tables, "actions", p.Summary.Actions,
		"destructive_actions", p.Summary.DestructiveActions, "errors", p.Summary.Errors)
	return p, nil
}

// readPlanFile reads a saved plan; planfile.Load refuses truncated,
// hand-edited or other-major-version files.
func (c *cli) readPlanFile(name string) (*diff.Plan, error) {
	p, err := planfile.Load(c.path(name))
	if errors.Is(err, planfile.ErrInvalid) {
		return nil, fmt.Errorf("saved plan %s: %w", name, err)
	}
	return p, err
}
