package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"golang.org/x/mod/module"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
)

// version is the icewright release; the saved plan records it.
const version = "0.1.0"

// Exit codes (docs/design.md §1).
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // plan -detailed-exitcode with changes
	exitFmtDiff = 3 // fmt -check with a file that would change (as terraform fmt)
)

// cli is one invocation: its streams, environment and working directory.
// Everything a command needs from the process comes through here, so tests
// run it in-process with buffers and a fixed clock.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            map[string]string
	environ        []string // the same, in os.Environ form, for config.Load
	stdinTTY       bool
	stdoutTTY      bool
	stderrTTY      bool
	now            func() time.Time
	dir            string // absolute working directory, after -chdir
	chdir          string // -chdir as given, for the commands the output suggests
	noColor        bool   // -no-color on the command line
	// validating is set by validate: an unset env() is an unknown value
	// (config.LoadOptions.UnsetEnvUnknown), not an error.
	validating bool
	// compactWarnings is -compact-warnings: a warning is one line.
	compactWarnings bool
	// jsonEvents is apply -json: progress is a stream of JSON lines on
	// stdout, ended by the results document.
	jsonEvents bool
	// log is ICEWRIGHT_LOG's logger, on stderr.
	log  *slog.Logger
	self string // how the user ran icewright, for "run this next" hints
}

// run is the whole CLI; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	return runAt(args, stdin, stdout, stderr, environ, time.Now)
}

// runAt is run on the clock now.
func runAt(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string, now func() time.Time) int {
	c := &cli{
		stdin:     stdin,
		stdout:    stdout,
		stderr:    stderr,
		env:       envMap(environ),
		environ:   environ,
		stdinTTY:  isTerminal(stdin),
		stdoutTTY: isTerminal(stdout),
		stderrTTY: isTerminal(stderr),
		now:       now,
		self:      selfName(os.Args[0]),
	}
	return c.run(args)
}

// maskSecrets puts config.Secrets masking in front of stdout and stderr.
func (c *cli) maskSecrets(s config.Secrets) {
	c.stdout = views.NewMaskingWriter(c.stdout, s)
	c.stderr = views.NewMaskingWriter(c.stderr, s)
}

// flush writes what the masking writers hold back (a line not yet ended).
func (c *cli) flush() {
	for _, w := range []io.Writer{c.stdout, c.stderr} {
		if m, ok := w.(*views.MaskingWriter); ok {
			_ = m.Flush()
		}
	}
}

// selfName is how to tell the user to run icewright again: "go run
// ./cmd/icewright" when this binary was built by go run, else "icewright".
func selfName(argv0 string) string {
	if strings.Contains(filepath.ToSlash(argv0), "/go-build") {
		return "go run ./cmd/icewright"
	}
	return "icewright"
}

// shownPath renders an absolute path as the user should type it: relative
// to the directory they ran icewright in when it lies below it.
func (c *cli) shownPath(abs string) string {
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return abs
	}
	return rel
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func (c *cli) run(args []string) int {
	defer c.flush()
	if err := c.startLog(); err != nil {
		return c.fail(err)
	}
	g, err := ParseGlobal(args)
	if err != nil {
		return c.fail(err)
	}
	if g.Version {
		g.Command, g.Args = "version", nil
	}
	if g.Command == "" || g.Command == "help" {
		if g.Command == "help" && len(g.Args) > 0 {
			fmt.Fprint(c.stdout, helpFor(g.Args[0]))
			return exitOK
		}
		fmt.Fprint(c.stdout, mainHelp())
		if g.Help || g.Command == "help" {
			return exitOK
		}
		return exitError // no command: a usage error, as Terraform
	}
	if g.Help {
		fmt.Fprint(c.stdout, helpFor(g.Command))
		return exitOK
	}

	wd, err := os.Getwd()
	if err != nil {
		return c.fail(fmt.Errorf("working directory: %w", err))
	}
	c.dir = wd
	if g.Chdir != "" {
		// The directory is kept as a value instead of os.Chdir, so nothing
		// process-wide changes; every relative path is resolved with c.path.
		d := c.path(g.Chdir)
		st, err := os.Stat(d)
		if err != nil {
			return c.fail(fmt.Errorf("-chdir: %w", err))
		}
		if !st.IsDir() {
			return c.fail(fmt.Errorf("-chdir: %s is not a directory", g.Chdir))
		}
		c.dir = d
		c.chdir = g.Chdir
	}

	cmdArgs, err := c.withEnvArgs(g.Command, g.Args)
	if err != nil {
		return c.fail(err)
	}

	cmd, ok := lookupCommand(g.Command)
	if !ok {
		msg := fmt.Sprintf("unknown command %q", g.Command)
		if hint, ok := terraformHabits[g.Command]; ok {
			return c.fail(errors.New(msg + ": " + hint + ` (run "icewright -help" for the list)`))
		}
		if s := suggest(g.Command, commandNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return c.fail(errors.New(msg + ` (run "icewright -help" for the list)`))
	}
	c.logger().Debug("command", "name", g.Command, "args", loggedArgs(cmdArgs), "dir", c.dir)
	return cmd.run(c, cmdArgs)
}

// terraformHabits answers the Terraform commands icewright has no use for
// with what to run instead.
var terraformHabits = map[string]string{
	"init":    `icewright needs no init (no providers or state to install); write *.icewright.hcl files, or run "icewright demo DIR" for a working example, then "icewright validate" and "icewright plan"`,
	"refresh": `icewright keeps no state to refresh: "icewright plan" reads every table as it is now`,
	"destroy": `icewright never drops tables; to stop managing one, remove its table block or selector`,
}

// withEnvArgs adds ICEWRIGHT_CLI_ARGS and ICEWRIGHT_CLI_ARGS_<cmd> before the
// command line's own arguments, as Terraform does with TF_CLI_ARGS: the
// explicit flags come last and so win, and positional arguments stay last.
//
// ICEWRIGHT_CLI_ARGS is for every command, so a flag in it that this command
// does not take but another does (-no-color for version, -parallelism for
// validate) is left out instead of failing the command; a flag no command
// takes is still an error, as is anything in ICEWRIGHT_CLI_ARGS_<cmd>.
func (c *cli) withEnvArgs(cmd string, args []string) ([]string, error) {
	var out []string
	for _, name := range []string{"ICEWRIGHT_CLI_ARGS", "ICEWRIGHT_CLI_ARGS_" + cmd} {
		v := c.env[name]
		if strings.TrimSpace(v) == "" {
			continue
		}
		words, err := splitArgs(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == "ICEWRIGHT_CLI_ARGS" {
			words = c.flagsFor(cmd, words)
		}
		out = append(out, words...)
	}
	return append(out, args...), nil
}

// flagsFor keeps the words of ICEWRIGHT_CLI_ARGS that cmd takes: a flag
// (-name or -name=value) that cmd's parser does not define but another
// command's does is dropped, with a debug log line.
func (c *cli) flagsFor(cmd string, words []string) []string {
	own, ok := lookupCommand(cmd)
	if !ok || own.parse == nil {
		return words
	}
	undefined := func(parse func([]string) error, w string) bool {
		err := parse([]string{w})
		return err != nil && strings.Contains(err.Error(), "flag provided but not defined")
	}
	var out []string
	for _, w := range words {
		if !strings.HasPrefix(w, "-") || !undefined(own.parse, w) {
			out = append(out, w)
			continue
		}
		takenElsewhere := false
		for _, other := range commands() {
			if other.parse != nil && other.name != cmd && !undefined(other.parse, w) {
				takenElsewhere = true
				break
			}
		}
		if !takenElsewhere {
			out = append(out, w) // reported by the parser as unknown
			continue
		}
		c.logger().Debug("ICEWRIGHT_CLI_ARGS flag left out: the command does not take it", "command", cmd, "flag", w)
	}
	return out
}

// path resolves a user-given path against the working directory.
func (c *cli) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// colorOut and colorErr decide colour per stream: off with -no-color, with
// NO_COLOR set to anything non-empty (no-color.org), with TERM=dumb, or
// when that stream is not a terminal.
func (c *cli) colorOut() *views.Styles { return views.NewStyles(c.colorAllowed() && c.stdoutTTY) }
func (c *cli) colorErr() *views.Styles { return views.NewStyles(c.colorAllowed() && c.stderrTTY) }

func (c *cli) colorAllowed() bool {
	return !c.noColor && c.env["NO_COLOR"] == "" && c.env["TERM"] != "dumb"
}

// fail prints an error on stderr and returns exit code 1.
func (c *cli) fail(err error) int {
	views.Error(c.stderr, err, c.colorErr())
	return exitError
}

// usage reports a command-line error, or prints help for -h.
func (c *cli) usage(cmd string, err error) int {
	if errors.Is(err, errHelp) {
		fmt.Fprint(c.stdout, helpFor(cmd))
		return exitOK
	}
	views.Error(c.stderr, fmt.Errorf("%w\n\nRun \"icewright %s -help\" for usage.", err, cmd), c.colorErr())
	return exitError
}

func (c *cli) version(args []string) int {
	a, err := ParseVersion(args)
	if err != nil {
		return c.usage("version", err)
	}
	b := readBuild()
	if a.JSON {
		doc, _ := json.MarshalIndent(map[string]any{
			"icewright_version": version, "commit": b.commit, "commit_date": b.date,
			"modified": b.modified, "go_version": b.goVersion,
		}, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", doc)
		return exitOK
	}
	commit := b.commit
	if commit == "" {
		commit = "unknown (built without version control information)"
	} else if b.modified {
		commit += " (with uncommitted changes)"
	}
	date := b.date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(c.stdout, "icewright version %s\ncommit %s\ndate   %s\n", version, commit, date)
	return exitOK
}

// buildInfo is what the Go toolchain stamped into the binary: go build and
// go install from a git checkout or a module record vcs.revision and
// vcs.time (the commit's time: Go records no build clock, which keeps
// builds reproducible).
type buildInfo struct {
	commit, date, goVersion string
	modified                bool
}

func readBuild() buildInfo {
	var b buildInfo
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.goVersion = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = s.Value
		case "vcs.time":
			b.date = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	if b.commit == "" {
		b.commit, b.date = fromModuleVersion(info.Main.Version)
	}
	return b
}

// fromModuleVersion reads the commit and its time from a pseudo-version:
// `go install …@latest` builds from the module cache, which has no
// version control to stamp, but a version between tags names its commit
// (v0.1.1-0.20261201120000-abcdef123456).
func fromModuleVersion(v string) (commit, date string) {
	if !module.IsPseudoVersion(v) {
		return "", ""
	}
	rev, err := module.PseudoVersionRev(v)
	if err != nil {
		return "", ""
	}
	t, err := module.PseudoVersionTime(v)
	if err != nil {
		return rev, ""
	}
	return rev, t.UTC().Format(time.RFC3339)
}
