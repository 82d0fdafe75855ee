package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"runtime/debug"
	"strings"

	"github.com/google/uuid"
	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

const approvalPrompt = "Do you want to perform these actions? Only 'yes' will be accepted: "

// errNoTTY: approval needs a person at a terminal. Refusing is the safe
// default for a CD job that forgot -auto-approve.
var errNoTTY = errors.New("apply needs approval, but standard input is not a terminal: nothing was changed.\n" +
	"Run with -auto-approve, or save a reviewed plan with \"icewright plan -out=FILE\" and run \"icewright apply FILE\"")

// errNoInput: -input=false forbids the approval question.
var errNoInput = errors.New("apply needs approval, but -input=false forbids asking: nothing was changed.\n" +
	"Run with -auto-approve, or save a reviewed plan with \"icewright plan -out=FILE\" and run \"icewright apply FILE\"")

// apply plans, asks and applies; or applies a saved plan.
func (c *cli) apply(args []string) int {
	a, err := ParseApply(args)
	if err != nil {
		return c.usage("apply", err)
	}
	c.noColor = c.noColor || a.NoColor
	c.compactWarnings = a.CompactWarnings
	needsApproval := a.PlanFile == "" && !a.AutoApprove
	if needsApproval && a.JSON {
		// There is no place for the question in a JSON stream.
		return c.usage("apply", errors.New("apply -json needs -auto-approve or a saved plan file"))
	}
	// Refuse before observing anything: the answer cannot come.
	if needsApproval && !a.Input {
		return c.fail(errNoInput)
	}
	if needsApproval && !c.stdinTTY {
		return c.fail(errNoTTY)
	}

	cfg, warnings, ok := c.loadConfigWarnings(a.Vars, a.PlanFile == "")
	if !ok {
		return exitError
	}
	if a.JSON {
		// JSON lines on stdout: a version line, an object per event, and
		// the results document last (docs/plan-format.md, apply -json).
		c.jsonEvents = true
		c.newProgress(false).Version(version)
	}
	signals := c.applyInterrupts()
	defer signals.release()
	ctx := signals.stop
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()

	plan, exit, ok := c.applyPlan(ctx, a, cfg, sess, warnings, needsApproval)
	if !ok {
		return exit
	}

	prog := c.newProgress(false)
	prog.Heartbeat(views.HeartbeatEvery)
	signals.attach(prog)
	res, err := apply.Apply(ctx, cfg, sess, plan, apply.ApplyOptions{
		Parallelism: a.Parallelism,
		Now:         c.now,
		Saved:       a.PlanFile != "",
		Progress:    c.logEvents(prog.Event),
		Version:     version,
		// While compaction runs, the Go soft memory limit follows what the
		// compactions hold (docs/benchmarks.md, Compaction).
		SetMemoryLimit: memoryLimitSetter(c.env),
		Abort:          signals.abort,
		Lock:           a.Lock,
		LockTimeout:    a.LockTimeout,
		LockSkipOK:     a.LockSkipOK,
		LockOwner:      c.lockOwner(),
		RunID:          uuid.NewString(),
	})
	signals.attach(nil)
	prog.Done()
	if err != nil {
		return c.fail(fmt.Errorf("apply: %w", err))
	}
	if a.JSON {
		err = views.ResultsJSONLine(c.stdout, res)
	} else {
		if a.PlanFile == "" {
			fmt.Fprintln(c.stdout)
		}
		err = views.Results(c.stdout, res, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	c.reportFailedTables(res)
	if res.Failed() || res.Interrupted || len(plan.Errors) > 0 {
		return exitError
	}
	return exitOK
}

// applyPlan is the plan apply runs: the saved plan file, or a plan made
// now, shown, and approved when approval is needed. ok false: stop with
// exit (nothing to do, cancelled, or failed).
func (c *cli) applyPlan(ctx context.Context, a Apply, cfg *config.Config, sess *providers.Session, warnings hcl.Diagnostics, needsApproval bool) (plan *diff.Plan, exit int, ok bool) {
	if a.PlanFile != "" {
		plan, err := c.readPlanFile(a.PlanFile)
		if err != nil {
			return nil, c.fail(err), false
		}
		return plan, 0, true
	}
	plan, err := c.makePlan(ctx, cfg, sess, a.Targets, a.Parallelism, warnings)
	if err != nil {
		return nil, c.fail(err), false
	}
	if !a.JSON {
		if err := views.Plan(c.stdout, plan, c.colorOut()); err != nil {
			return nil, c.fail(err), false
		}
	}
	c.reportPlanProblems(plan)
	if plan.Summary.Actions == 0 && !a.JSON {
		// Nothing to approve or do; errors still make the exit 1.
		// (-json goes on, so the results document lists every table
		// as in policy.)
		return nil, planExitCode(plan, false), false
	}
	if needsApproval && plan.Summary.Actions > 0 {
		ok, err := c.approve()
		if err != nil {
			return nil, c.fail(err), false
		}
		if !ok {
			fmt.Fprintln(c.stderr, "\nApply cancelled: nothing was changed.")
			return nil, exitError, false
		}
	}
	return plan, 0, true
}

// reportFailedTables says each failed table once on stderr, where a
// pipeline looks for "Error:" (the results on stdout hold it too, in a
// table cell). A refusal was said there by the plan (a plan with refusals
// is never saved, so apply made it), and is not said again.
func (c *cli) reportFailedTables(res *apply.Results) {
	for _, t := range res.Tables {
		if t.Status == apply.StatusFailed {
			msg := t.Error
			if msg == "" {
				for _, ac := range t.Actions {
					if ac.Status == apply.StatusFailed && ac.Error != "" {
						msg = fmt.Sprintf("%s: %s", ac.Type, ac.Error)
						break
					}
				}
			}
			if msg = strings.TrimSpace(msg); msg == "" {
				msg = "failed"
			}
			views.Error(c.stderr, fmt.Errorf("%s: %s", t.Address, msg), c.colorErr())
		}
	}
}

// lockOwner names this run in the leases it takes, for a person reading
// "locked by ...": the CI job when one is known (its URL), else
// user@host and the process id.
func (c *cli) lockOwner() string {
	env := c.env
	switch {
	case env["GITHUB_RUN_ID"] != "" && env["GITHUB_REPOSITORY"] != "":
		server := cmp.Or(env["GITHUB_SERVER_URL"], "https://github.com")
		return server + "/" + env["GITHUB_REPOSITORY"] + "/actions/runs/" + env["GITHUB_RUN_ID"]
	case env["CI_JOB_URL"] != "":
		return env["CI_JOB_URL"] // GitLab
	case env["BUILD_URL"] != "":
		return env["BUILD_URL"] // Jenkins
	}
	name := cmp.Or(env["USER"], env["USERNAME"], env["LOGNAME"])
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s@%s pid %d", cmp.Or(name, "unknown"), host, os.Getpid())
}

// approve asks on stderr and reads one line from stdin.
func (c *cli) approve() (bool, error) { return c.confirm(approvalPrompt) }

// confirm asks prompt on stderr and reads one line from stdin: only "yes"
// is a yes.
func (c *cli) confirm(prompt string) (bool, error) {
	s := c.colorErr()
	fmt.Fprint(c.stderr, "\n"+s.Bold(prompt))
	c.flush() // the prompt has no end of line
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	fmt.Fprintln(c.stderr)
	if err != nil && line == "" {
		// EOF (Ctrl-D) is a no, not an error.
		return false, nil
	}
	return strings.TrimSpace(line) == "yes", nil
}

// memoryLimitSetter is what apply may use to change the Go soft memory
// limit: the runtime's setter, or nil when the user set GOMEMLIMIT (theirs
// stands, even "off").
func memoryLimitSetter(env map[string]string) func(int64) int64 {
	if env["GOMEMLIMIT"] != "" {
		return nil
	}
	return debug.SetMemoryLimit
}
