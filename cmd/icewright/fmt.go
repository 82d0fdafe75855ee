package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/rogpeppe/go-internal/diff"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
)

const configSuffix = ".icewright.hcl"

func (c *cli) fmt(args []string) int {
	a, err := ParseFmt(args)
	if err != nil {
		return c.usage("fmt", err)
	}
	c.noColor = c.noColor || a.NoColor
	if a.Path == "-" {
		return c.fmtStdin(a)
	}

	files, err := c.fmtTargets(a)
	if err != nil {
		return c.fail(err)
	}
	changed := 0
	var diags hcl.Diagnostics
	parser := hclparse.NewParser() // only for rendering syntax errors with snippets
	for _, f := range files {
		src, err := config.ReadRegularFile(f.abs, config.MaxConfigFileBytes)
		if err != nil {
			return c.fail(fmt.Errorf("fmt: %w", err))
		}
		out, d := config.Format(src, f.display)
		if d.HasErrors() {
			parser.ParseHCL(src, f.display)
			diags = append(diags, d...)
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		changed++
		if a.List {
			fmt.Fprintln(c.stdout, f.display)
		}
		if a.Diff {
			c.stdout.Write(diff.Diff("old/"+f.display, src, "new/"+f.display, out))
		}
		if a.Write {
			// Keep the file's mode: a config may be deliberately read-only
			// for others.
			st, err := os.Stat(f.abs)
			if err != nil {
				return c.fail(fmt.Errorf("fmt: %w", err))
			}
			if err := os.WriteFile(f.abs, out, st.Mode().Perm()); err != nil {
				return c.fail(fmt.Errorf("fmt: write %s: %w", f.display, err))
			}
		}
	}
	if len(diags) > 0 {
		views.Diagnostics(c.stderr, parser.Files(), diags, c.colorErr())
		return exitError
	}
	if a.Check && changed > 0 {
		return exitFmtDiff
	}
	return exitOK
}

// fmtStdin formats standard input to standard output (PATH "-"), for
// editors; with -check it only sets the exit code.
func (c *cli) fmtStdin(a Fmt) int {
	src, err := config.ReadLimited(c.stdin, "standard input", config.MaxConfigFileBytes)
	if err != nil {
		return c.fail(fmt.Errorf("fmt: read stdin: %w", err))
	}
	out, d := config.Format(src, "<stdin>")
	if d.HasErrors() {
		parser := hclparse.NewParser()
		parser.ParseHCL(src, "<stdin>")
		views.Diagnostics(c.stderr, parser.Files(), d, c.colorErr())
		return exitError
	}
	if a.Diff && !bytes.Equal(src, out) {
		c.stdout.Write(diff.Diff("old/<stdin>", src, "new/<stdin>", out))
	}
	if !a.Check && !a.Diff {
		c.stdout.Write(out)
	}
	if a.Check && !bytes.Equal(src, out) {
		return exitFmtDiff
	}
	return exitOK
}

type fmtFile struct {
	abs     string
	display string // as the user should read it: relative to the working directory
}

// fmtTargets lists the files fmt works on: PATH itself when it is a file
// (whatever its name, as terraform fmt), else the *.icewright.hcl files of
// the directory, and of its subdirectories with -recursive.
func (c *cli) fmtTargets(a Fmt) ([]fmtFile, error) {
	root := c.dir
	if a.Path != "" {
		root = c.path(a.Path)
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("fmt: %w", err)
	}
	display := func(p string) string {
		if rel, err := filepath.Rel(c.dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
		return p
	}
	if !st.IsDir() {
		return []fmtFile{{abs: root, display: display(root)}}, nil
	}
	var out []fmtFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			// Hidden directories (.git, .terraform-like caches) are never
			// configuration.
			if !a.Recursive || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), configSuffix) && d.Type().IsRegular() {
			out = append(out, fmtFile{abs: p, display: display(p)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fmt: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].display < out[j].display })
	return out, nil
}
