package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// FileSuffix marks configuration files; only these, directly in the
// directory, are read.
const FileSuffix = ".icewright.hcl"

// LoadOptions are the inputs of Load besides the files themselves.
type LoadOptions struct {
	Vars     []string // "-var" values, "name=value", in command-line order
	VarFiles []string // "-var-file" paths; relative ones are against dir
	Env      []string // os.Environ() form: ICEWRIGHT_VAR_name and env()
	Version  string   // icewright version, checked against required_version
	// UnsetEnvUnknown makes an unset env() without a default an unknown
	// value instead of an error: `icewright validate` checks a
	// configuration without its secrets (a pull request from a fork, a CI
	// check job), as terraform validate does regardless of variables.
	// Everything that does not depend on the value is still checked;
	// plan, apply and the other commands leave it false and fail on it.
	UnsetEnvUnknown bool
}

type loader struct {
	dir    string // as the caller gave it; prefixes file names in ranges
	absDir string
	opts   LoadOptions
	env    map[string]string
	parser *hclparse.Parser
	cfg    *Config
	diags  hcl.Diagnostics
	ctx    *hcl.EvalContext
	// varValues are the resolved variables, for the eval context and digest.
	varValues map[string]cty.Value
	sources   map[string][]byte
	// labelRanges keeps the label of each table and tables block, where
	// errors about the address or pattern point.
	labelRanges map[any]hcl.Range
	// ignoreRanges are the elements of ignore_warnings, where an unknown
	// code is reported.
	ignoreRanges []hcl.Range
	// scratch is the body readTable decodes each table block into before
	// it keeps what the block set.
	scratch *PolicyBody
}

// Load reads every *.icewright.hcl file in dir (not recursively), merges them
// and decodes the whole language. It always returns a Config, even with
// errors, so callers can print diagnostics with cfg.Files; the Config is
// only meaningful when the diagnostics have no errors. Warnings never make
// Load fail.
func Load(dir string, opts LoadOptions) (*Config, hcl.Diagnostics) {
	l := &loader{
		dir:       dir,
		opts:      opts,
		env:       envMap(opts.Env),
		parser:    hclparse.NewParser(),
		varValues: map[string]cty.Value{},
		sources:   map[string][]byte{},

		labelRanges: map[any]hcl.Range{},
	}
	l.cfg = &Config{
		Files:     map[string]*hcl.File{},
		Variables: map[string]*Variable{},
		Policies:  map[string]*Policy{},
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		l.errorf(nil, "Invalid configuration directory", "Cannot resolve %s: %s.", dir, err)
		return l.finish()
	}
	l.absDir = abs
	l.cfg.Dir = abs
	l.load()
	return l.finish()
}

// configFileNames is the configuration files of dir, sorted: the *.icewright.hcl
// entries directly in it that are not directories.
func configFileNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), FileSuffix) {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// otherHCLFiles says which .hcl files dir holds that are not configuration
// files (main.hcl, icewright.hcl: a name habit from elsewhere), or "".
func otherHCLFiles(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") {
			found = append(found, e.Name())
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	stem := strings.TrimSuffix(found[0], ".hcl")
	stem = strings.TrimSuffix(stem, ".icewright")
	if stem == "icewright" {
		stem = "main"
	}
	return fmt.Sprintf(" It has %s, which icewright does not read: configuration files end in %s (rename %s to %s%s).",
		strings.Join(found, ", "), FileSuffix, found[0], stem, FileSuffix)
}

func (l *loader) finish() (*Config, hcl.Diagnostics) {
	for name, f := range l.parser.Files() {
		l.cfg.Files[name] = fileForDiagnostics(name, f.Bytes)
	}
	sortDiagnostics(l.diags)
	return l.cfg, l.diags
}

func (l *loader) load() {
	names, err := configFileNames(l.dir)
	if err != nil {
		l.errorf(nil, "Cannot read configuration directory", "%s.", err)
		return
	}
	if len(names) == 0 {
		l.errorf(nil, "No configuration files", "The directory %s has no *%s files.%s", l.dir, FileSuffix, otherHCLFiles(l.dir))
		return
	}
	bodies, ok := l.parseFiles(names)
	if !ok {
		return
	}
	byType, tableSources, ok := l.sortBlocks(bodies)
	if !ok {
		return
	}

	l.decodeSettings(byType["icewright"])
	l.decodeVariables(byType["variable"])
	l.buildContext()
	l.decodeLocals(byType["locals"])
	for _, b := range byType["catalog"] {
		l.decodeCatalog(b)
	}
	for _, b := range byType["engine"] {
		l.decodeEngine(b)
	}
	for _, b := range byType["policy"] {
		l.decodePolicy(b)
	}
	for _, ts := range tableSources {
		for _, t := range ts.decoded {
			l.addTable(t)
		}
		for _, b := range ts.tableBlocks() {
			l.decodeTable(b)
		}
	}
	for _, b := range byType["tables"] {
		l.decodeTables(b)
	}
	l.checkReferences()
	l.checkEngines()
	l.checkCycles()
	l.checkSelectors()
	l.checkEffective()
	l.dropIgnored()
	l.cfg.Digest = l.digest()
}

// parseFiles reads and parses the configuration files, in order, within
// the size limit (false: past it, nothing more is read). A file readChunk
// can take in chunks is parsed so, its table blocks decoded as it goes.
func (l *loader) parseFiles(names []string) ([]parsedChunk, bool) {
	var bodies []parsedChunk
	// The context of the table blocks readChunk decodes as their file is
	// parsed: functions and path, var and local still empty.
	l.buildContext()
	total := 0
	for _, name := range names {
		path := filepath.Join(l.dir, name)
		src, err := ReadRegularFile(path, MaxConfigFileBytes)
		if err != nil {
			l.errorf(nil, "Cannot read configuration file", "%s.", err)
			continue
		}
		if total += len(src); total > maxConfigBytes {
			l.errorf(&hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos}, "Configuration too large",
				"With this file the *%s files of %s hold %s, more than %s, the limit icewright reads (it keeps memory bounded). Split the configuration, or match tables with tables blocks instead of one table block each.",
				FileSuffix, l.dir, FormatSize(int64(total)), FormatSize(int64(maxConfigBytes)))
			return nil, false
		}
		l.sources[name] = src
		if d := checkInput(src, path); d != nil {
			l.diags = append(l.diags, d)
			continue
		}
		if chunks, diags, ok := parseInChunks(src, path, l.readChunk); ok {
			l.diags = append(l.diags, diags...)
			bodies = append(bodies, chunks...)
			l.cfg.Files[path] = fileForDiagnostics(path, src)
			continue
		}
		f, diags := l.parser.ParseHCL(src, path)
		l.diags = append(l.diags, diags...)
		if f != nil && f.Body != nil {
			bodies = append(bodies, parsedChunk{body: f.Body})
		}
	}
	return bodies, true
}

// sortBlocks sorts the parsed blocks by type, the table blocks (and
// tables decoded while parsing) kept in declaration order (false: more
// blocks than the limit).
func (l *loader) sortBlocks(bodies []parsedChunk) (map[string][]*hcl.Block, []tableSource, bool) {
	byType := map[string][]*hcl.Block{}
	// tableSources are the table blocks in declaration order (memory.go).
	var tableSources []tableSource
	blocks := 0
	for i := range bodies {
		c := &bodies[i]
		if c.body != nil {
			content, diags := c.body.Content(topSchema)
			c.body = nil
			c.diags = diags
			if content != nil {
				for _, b := range content.Blocks {
					c.items = append(c.items, chunkItem{block: b, defRange: b.DefRange})
				}
			}
		}
		l.diags = append(l.diags, c.diags...)
		src := tableSource{}
		for _, it := range c.items {
			if blocks++; blocks > maxBlocks {
				l.errorf(it.defRange.Ptr(), "Too many blocks",
					"The configuration has more than %s blocks; this is block %s. icewright reads at most %s, a limit that keeps validate and plan within a few hundred MiB of memory. Match tables with tables blocks (patterns) rather than one table block each.",
					GroupDigits(int64(maxBlocks)), GroupDigits(int64(maxBlocks+1)), GroupDigits(int64(maxBlocks)))
				return nil, nil, false
			}
			switch {
			case it.table != nil:
				src.decoded = append(src.decoded, it.table)
			case it.block == nil:
				src.chunk = c
			case it.block.Type == "table":
				src.blocks = append(src.blocks, it.block)
			default:
				byType[it.block.Type] = append(byType[it.block.Type], it.block)
			}
		}
		c.items = nil
		if src.chunk != nil || src.blocks != nil || src.decoded != nil {
			tableSources = append(tableSources, src)
		}
	}
	return byType, tableSources, true
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func (l *loader) errorf(subject *hcl.Range, summary, format string, args ...any) {
	l.diags = append(l.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject,
	})
}

// warnf adds a lint warning with its code (lint.go).
func (l *loader) warnf(code string, subject *hcl.Range, summary, format string, args ...any) {
	l.diags = append(l.diags, lintWarning(code, subject, summary, fmt.Sprintf(format, args...)))
}

// sortDiagnostics orders diagnostics by position. hcl reports unknown
// attributes in map order; a stable order makes output and goldens
// deterministic. Diagnostics without a subject come first.
func sortDiagnostics(diags hcl.Diagnostics) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		case a.Start.Line != b.Start.Line:
			return a.Start.Line < b.Start.Line
		default:
			return a.Start.Column < b.Start.Column
		}
	})
}

// settingsHCL is the fixed-schema `icewright` block.
type settingsHCL struct {
	RequiredVersion *string   `hcl:"required_version"`
	Parallelism     *int      `hcl:"parallelism"`
	IgnoreWarnings  *[]string `hcl:"ignore_warnings"`
}

func (l *loader) decodeSettings(blocks []*hcl.Block) {
	for i, b := range blocks {
		if i > 0 {
			l.errorf(b.DefRange.Ptr(), "Duplicate icewright block",
				"The icewright block is already declared at %s; declare it once.", blocks[0].DefRange)
			continue
		}
		var s settingsHCL
		diags := gohcl.DecodeBody(b.Body, nil, &s)
		l.diags = append(l.diags, diags...)
		l.cfg.Settings.DeclRange = b.DefRange
		attrs, _ := b.Body.JustAttributes()
		if s.Parallelism != nil {
			if *s.Parallelism < 1 {
				l.errorf(attrRange(attrs, "parallelism", b), "Invalid parallelism", "parallelism must be at least 1, got %d.", *s.Parallelism)
			}
			l.cfg.Settings.Parallelism = *s.Parallelism
		}
		if s.IgnoreWarnings != nil {
			l.cfg.Settings.IgnoreWarnings = *s.IgnoreWarnings
			if a, ok := attrs["ignore_warnings"]; ok {
				if elems, d := hcl.ExprList(a.Expr); !d.HasErrors() {
					for _, e := range elems {
						l.ignoreRanges = append(l.ignoreRanges, e.Range())
					}
				}
			}
		}
		if s.RequiredVersion != nil {
			l.cfg.Settings.RequiredVersion = *s.RequiredVersion
			ok, err := versionSatisfies(l.opts.Version, *s.RequiredVersion)
			if err != nil {
				l.errorf(attrRange(attrs, "required_version", b), "Invalid required_version", "%s.", err)
			} else if !ok {
				l.errorf(attrRange(attrs, "required_version", b), "Unsupported icewright version",
					"This configuration requires icewright %s; this is icewright %s.", *s.RequiredVersion, l.opts.Version)
			}
		}
	}
}

// attrRange is the value range of a named attribute, or the block's header
// when the attribute cannot be found.
func attrRange(attrs hcl.Attributes, name string, b *hcl.Block) *hcl.Range {
	if a, ok := attrs[name]; ok {
		return a.Expr.Range().Ptr()
	}
	return b.DefRange.Ptr()
}

// buildContext makes the evaluation context for everything after variables:
// var.*, path.root and the function library. Locals are added as they are
// evaluated.
func (l *loader) buildContext() {
	root := cty.StringVal(l.absDir)
	l.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   cty.ObjectVal(l.varValues),
			"path":  cty.ObjectVal(map[string]cty.Value{"root": root, "module": root}),
			"local": cty.EmptyObjectVal,
		},
		Functions: functions(l.absDir, l.env, l.onUnsetEnv()),
	}
}

// decodeLocals evaluates locals in dependency order, so a local may use
// another declared later or in another file. A cycle is an error.
func (l *loader) decodeLocals(blocks []*hcl.Block) {
	all := map[string]*hcl.Attribute{}
	var order []string
	for _, b := range blocks {
		attrs, diags := b.Body.JustAttributes()
		l.diags = append(l.diags, diags...)
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			return attrs[names[i]].Range.Start.Byte < attrs[names[j]].Range.Start.Byte
		})
		for _, n := range names {
			a := attrs[n]
			if prev, ok := all[n]; ok {
				l.errorf(a.NameRange.Ptr(), "Duplicate local value", "A local value named %q was already declared at %s.", n, prev.NameRange)
				continue
			}
			all[n] = a
			order = append(order, n)
		}
	}
	values := map[string]cty.Value{}
	state := map[string]int{} // 0 new, 1 evaluating, 2 done
	var eval func(name string, stack []string)
	eval = func(name string, stack []string) {
		switch state[name] {
		case 2:
			return
		case 1:
			a := all[name]
			l.errorf(a.NameRange.Ptr(), "Cycle in local values", "local.%s depends on itself: %s -> %s.", name, strings.Join(stack, " -> "), name)
			values[name] = cty.DynamicVal
			return
		}
		state[name] = 1
		a := all[name]
		for _, tr := range a.Expr.Variables() {
			if tr.RootName() != "local" || len(tr) < 2 {
				continue
			}
			if step, ok := tr[1].(hcl.TraverseAttr); ok {
				if _, declared := all[step.Name]; declared {
					eval(step.Name, append(stack, name))
				}
			}
		}
		l.ctx.Variables["local"] = cty.ObjectVal(values)
		v, diags := a.Expr.Value(l.ctx)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			v = cty.DynamicVal
		}
		if state[name] != 2 {
			values[name] = v
		}
		state[name] = 2
	}
	for _, n := range order {
		eval(n, nil)
	}
	l.ctx.Variables["local"] = cty.ObjectVal(values)
}

// onUnsetEnv is env()'s hook for an unset variable: nil (an error) unless
// LoadOptions.UnsetEnvUnknown, else it records the name in Config.UnsetEnv.
func (l *loader) onUnsetEnv() func(string) {
	if !l.opts.UnsetEnvUnknown {
		return nil
	}
	return func(name string) {
		if i, found := slices.BinarySearch(l.cfg.UnsetEnv, name); !found {
			l.cfg.UnsetEnv = slices.Insert(l.cfg.UnsetEnv, i, name)
		}
	}
}
