package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Arguments are parsed apart from running (as Terraform's
// internal/command/arguments), so every command's flag handling is a pure
// function of its argument list that unit tests can call directly.

// errHelp is returned by a Parse function when -h or -help was given; the
// caller prints the command's help on stdout and exits 0.
var errHelp = flag.ErrHelp

// Global holds the flags that come before the command name.
type Global struct {
	Chdir   string
	Help    bool
	Version bool
	Command string
	Args    []string // the command's own arguments
}

// ParseGlobal splits `[-chdir=DIR] [-help] [-version] COMMAND ARGS...`.
// Global flags must precede the command, as in Terraform.
func ParseGlobal(args []string) (Global, error) {
	var g Global
	for len(args) > 0 {
		a := args[0]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "chdir":
			if !hasValue {
				if len(args) < 2 {
					return g, errors.New("-chdir needs a directory: -chdir=DIR")
				}
				value = args[1]
				args = args[1:]
			}
			if value == "" {
				return g, errors.New("-chdir needs a directory: -chdir=DIR")
			}
			g.Chdir = value
		case "h", "help":
			g.Help = true
		case "v", "version":
			g.Version = true
		default:
			return g, fmt.Errorf("unknown global flag %s (global flags go before the command; command flags after it)", a)
		}
		args = args[1:]
	}
	if len(args) > 0 {
		g.Command = args[0]
		g.Args = args[1:]
	}
	return g, nil
}

// stringList is a repeatable flag (-target=A -target=B).
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// Vars collects -var and -var-file in the order given, because a later
// assignment overrides an earlier one (as in Terraform).
type Vars struct {
	Vars     []string // "name=value"
	VarFiles []string
}

type varFlag struct{ v *Vars }

func (f varFlag) String() string { return "" }
func (f varFlag) Set(s string) error {
	name, _, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("-var %q: expected name=value", s)
	}
	f.v.Vars = append(f.v.Vars, s)
	return nil
}

type varFileFlag struct{ v *Vars }

func (f varFileFlag) String() string { return "" }
func (f varFileFlag) Set(s string) error {
	if s == "" {
		return errors.New("-var-file needs a file name")
	}
	f.v.VarFiles = append(f.v.VarFiles, s)
	return nil
}

// addInputFlag registers -input, accepted as in Terraform so pipelines
// copied from it work. icewright asks for nothing but apply's approval:
// -input=false makes apply refuse to ask, as it already does without a
// terminal; plan has nothing to ask and accepts it for the same pipelines.
func addInputFlag(fs *flag.FlagSet, input *bool) {
	fs.BoolVar(input, "input", true, "")
}

// addCompactWarningsFlag registers -compact-warnings (as Terraform's):
// each warning in one line, its code, summary and location.
func addCompactWarningsFlag(fs *flag.FlagSet, compact *bool) {
	fs.BoolVar(compact, "compact-warnings", false, "")
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Errors are returned and rendered by run; the flag package's own
	// usage dump would mix with them on stderr.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func addVarFlags(fs *flag.FlagSet, v *Vars) {
	fs.Var(varFlag{v}, "var", "set a variable: -var=name=value")
	fs.Var(varFileFlag{v}, "var-file", "read variables from an HCL file")
}

// parseFlags runs fs.Parse and turns the flag package's messages into ones
// that name the command.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	return nil
}

func maxArgs(fs *flag.FlagSet, n int, what string) error {
	if fs.NArg() > n {
		if n == 0 {
			return fmt.Errorf("%s takes no arguments, got %q", fs.Name(), fs.Args())
		}
		return fmt.Errorf("%s takes at most %d argument (%s), got %q", fs.Name(), n, what, fs.Args())
	}
	return nil
}

// oneArg is the one positional argument a command requires: missing is the
// error (with the usage) when there is none.
func oneArg(fs *flag.FlagSet, what, missing string) (string, error) {
	if err := maxArgs(fs, 1, what); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", errors.New(missing)
	}
	return fs.Arg(0), nil
}

// Validate: `icewright validate [-json] [-compact-warnings] [-var...] [-no-color]`.
type Validate struct {
	Vars            Vars
	JSON            bool
	CompactWarnings bool
	NoColor         bool
}

func ParseValidate(args []string) (Validate, error) {
	var a Validate
	fs := newFlagSet("validate")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.JSON, "json", false, "")
	addCompactWarningsFlag(fs, &a.CompactWarnings)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	return a, maxArgs(fs, 0, "")
}

// Fmt: `icewright fmt [-check] [-diff] [-recursive] [-list=false] [PATH]`.
type Fmt struct {
	Check     bool
	Diff      bool
	Recursive bool
	List      bool
	Write     bool
	Path      string // "" = the working directory
	NoColor   bool
}

func ParseFmt(args []string) (Fmt, error) {
	a := Fmt{List: true, Write: true}
	fs := newFlagSet("fmt")
	fs.BoolVar(&a.Check, "check", false, "")
	fs.BoolVar(&a.Diff, "diff", false, "")
	fs.BoolVar(&a.Recursive, "recursive", false, "")
	fs.BoolVar(&a.List, "list", true, "")
	fs.BoolVar(&a.Write, "write", true, "")
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 1, "PATH"); err != nil {
		return a, err
	}
	a.Path = fs.Arg(0)
	if a.Check {
		// -check only reports, as terraform fmt -check.
		a.Write = false
	}
	return a, nil
}

// Output formats of plan and show (-format); -json is short for
// -format=json.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// addFormatFlags registers -format and its -json shorthand.
func addFormatFlags(fs *flag.FlagSet, format *string, jsonFlag *bool) {
	fs.StringVar(format, "format", "", "")
	fs.BoolVar(jsonFlag, "json", false, "")
}

// resolveFormat checks -format and folds -json into it.
func resolveFormat(cmd, format string, jsonFlag bool) (string, error) {
	switch format {
	case "", FormatText, FormatJSON, FormatMarkdown:
	default:
		return "", fmt.Errorf("%s: -format must be text, json or markdown, got %q", cmd, format)
	}
	if jsonFlag {
		if format != "" && format != FormatJSON {
			return "", fmt.Errorf("%s: -json is -format=json; it cannot be combined with -format=%s", cmd, format)
		}
		return FormatJSON, nil
	}
	if format == "" {
		return FormatText, nil
	}
	return format, nil
}

// Plan: `icewright plan [-out=FILE] [-format=text|json|markdown] [-json]
// [-detailed-exitcode] [-target=ADDR]... [-var=K=V]... [-var-file=F]
// [-parallelism=N] [-input=false] [-no-color]`.
type Plan struct {
	Out              string
	Format           string // FormatText, FormatJSON or FormatMarkdown
	JSON             bool   // Format == FormatJSON
	Input            bool   // -input (accepted; plan asks nothing)
	DetailedExitCode bool
	Targets          []string
	Vars             Vars
	Parallelism      int // 0 = the configuration's or the default
	CompactWarnings  bool
	NoColor          bool
}

func ParsePlan(args []string) (Plan, error) {
	var a Plan
	var targets stringList
	fs := newFlagSet("plan")
	fs.StringVar(&a.Out, "out", "", "")
	addFormatFlags(fs, &a.Format, &a.JSON)
	addInputFlag(fs, &a.Input)
	fs.BoolVar(&a.DetailedExitCode, "detailed-exitcode", false, "")
	fs.Var(&targets, "target", "")
	addVarFlags(fs, &a.Vars)
	fs.IntVar(&a.Parallelism, "parallelism", 0, "")
	addCompactWarningsFlag(fs, &a.CompactWarnings)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 0, ""); err != nil {
		return a, err
	}
	if a.Parallelism < 0 {
		return a, fmt.Errorf("plan: -parallelism must be at least 1, got %d", a.Parallelism)
	}
	f, err := resolveFormat("plan", a.Format, a.JSON)
	if err != nil {
		return a, err
	}
	a.Format, a.JSON = f, f == FormatJSON
	a.Targets = targets
	return a, nil
}

// Apply: `icewright apply [-auto-approve] [-json] [-target=ADDR]... [-var...]
// [-parallelism=N] [-no-color] [PLANFILE]`.
type Apply struct {
	AutoApprove bool
	JSON        bool
	Input       bool // -input=false: never ask for approval
	Lock        bool // -lock (default true): a lease per table with actions
	LockTimeout time.Duration
	LockSkipOK  bool // a table locked past -lock-timeout is a warning, not an error
	Targets     []string
	Vars        Vars
	Parallelism int
	// CompactWarnings: -compact-warnings.
	CompactWarnings bool
	NoColor         bool
	PlanFile        string
}

func ParseApply(args []string) (Apply, error) {
	var a Apply
	var targets stringList
	fs := newFlagSet("apply")
	fs.BoolVar(&a.AutoApprove, "auto-approve", false, "")
	fs.BoolVar(&a.JSON, "json", false, "")
	addInputFlag(fs, &a.Input)
	fs.BoolVar(&a.Lock, "lock", true, "")
	fs.DurationVar(&a.LockTimeout, "lock-timeout", 0, "")
	fs.BoolVar(&a.LockSkipOK, "lock-skip-ok", false, "")
	fs.Var(&targets, "target", "")
	addVarFlags(fs, &a.Vars)
	fs.IntVar(&a.Parallelism, "parallelism", 0, "")
	addCompactWarningsFlag(fs, &a.CompactWarnings)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 1, "PLANFILE"); err != nil {
		return a, err
	}
	if a.Parallelism < 0 {
		return a, fmt.Errorf("apply: -parallelism must be at least 1, got %d", a.Parallelism)
	}
	if a.LockTimeout < 0 {
		return a, fmt.Errorf("apply: -lock-timeout must not be negative, got %s", a.LockTimeout)
	}
	a.Targets = targets
	a.PlanFile = fs.Arg(0)
	if a.PlanFile != "" && len(a.Targets) > 0 {
		// A saved plan was reviewed as a whole; narrowing it at apply time
		// would apply something nobody saw.
		return a, errors.New("apply: -target cannot be combined with a saved plan file; use -target when running plan")
	}
	return a, nil
}

// Show: `icewright show [-format=text|json|markdown] [-json] [-no-color] PLANFILE`.
type Show struct {
	Format   string
	JSON     bool
	NoColor  bool
	PlanFile string
}

func ParseShow(args []string) (Show, error) {
	var a Show
	fs := newFlagSet("show")
	addFormatFlags(fs, &a.Format, &a.JSON)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	f, err := resolveFormat("show", a.Format, a.JSON)
	if err != nil {
		return a, err
	}
	a.Format, a.JSON = f, f == FormatJSON
	arg, err := oneArg(fs, "PLANFILE", "show needs a saved plan file: icewright show [-json] PLANFILE")
	if err != nil {
		return a, err
	}
	a.PlanFile = arg
	return a, nil
}

// Inspect: `icewright inspect [-json] [-partitions] [-var...] [-no-color]
// ADDR|SELECTOR...`.
type Inspect struct {
	JSON       bool
	Partitions bool
	Vars       Vars
	NoColor    bool
	// Addresses are table addresses or selectors (globs), in the order
	// given.
	Addresses []string
}

func ParseInspect(args []string) (Inspect, error) {
	var a Inspect
	fs := newFlagSet("inspect")
	fs.BoolVar(&a.JSON, "json", false, "")
	fs.BoolVar(&a.Partitions, "partitions", false, "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if fs.NArg() == 0 {
		return a, errors.New("inspect needs a table address or selector: icewright inspect [-json] CATALOG.NAMESPACE.TABLE|'CATALOG.NAMESPACE.*'...")
	}
	a.Addresses = fs.Args()
	return a, nil
}

// Explain: `icewright explain [-var...] [-no-color] ADDR`.
type Explain struct {
	Vars    Vars
	NoColor bool
	Address string
}

func ParseExplain(args []string) (Explain, error) {
	var a Explain
	fs := newFlagSet("explain")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	arg, err := oneArg(fs, "ADDR", "explain needs a table address: icewright explain CATALOG.NAMESPACE.TABLE")
	if err != nil {
		return a, err
	}
	a.Address = arg
	return a, nil
}

// Demo: `icewright demo [DIR]`.
type Demo struct {
	Dir     string
	NoColor bool
}

const defaultDemoDir = "icewright-demo"

func ParseDemo(args []string) (Demo, error) {
	a := Demo{Dir: defaultDemoDir}
	fs := newFlagSet("demo")
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 1, "DIR"); err != nil {
		return a, err
	}
	if fs.NArg() == 1 {
		a.Dir = fs.Arg(0)
	}
	return a, nil
}

// Version: `icewright version [-json]`.
type Version struct {
	JSON bool
}

func ParseVersion(args []string) (Version, error) {
	var a Version
	fs := newFlagSet("version")
	fs.BoolVar(&a.JSON, "json", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	return a, maxArgs(fs, 0, "")
}

// splitArgs splits an ICEWRIGHT_CLI_ARGS value into words the way a POSIX shell
// would for the simple cases people write there: whitespace separates,
// single and double quotes group, backslash escapes outside single quotes.
func splitArgs(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, errors.New("trailing backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
