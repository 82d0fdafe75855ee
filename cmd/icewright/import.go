package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// Import: `icewright import [-catalog=NAME] [-target=GLOB]... [-out=FILE]
// [-var...] [-no-color]`.
type Import struct {
	Catalog string
	Targets []string
	Out     string
	Vars    Vars
	NoColor bool
}

func ParseImport(args []string) (Import, error) {
	var a Import
	var targets stringList
	fs := newFlagSet("import")
	fs.StringVar(&a.Catalog, "catalog", "", "")
	fs.Var(&targets, "target", "")
	fs.StringVar(&a.Out, "out", "", "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 0, ""); err != nil {
		return a, err
	}
	a.Targets = targets
	return a, nil
}

// importTables writes the configuration that keeps the configured
// catalogs' unmanaged tables as they are (config.Generate says what that
// means): on stdout, or into -out, which must not exist yet (as
// terraform's -generate-config-out: a generated file never replaces one a
// person may have edited).
func (c *cli) importTables(args []string) int {
	a, err := ParseImport(args)
	if err != nil {
		return c.usage("import", err)
	}
	c.noColor = c.noColor || a.NoColor
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	out := c.path(a.Out)
	if a.Out != "" {
		if _, err := os.Lstat(out); err == nil {
			return c.fail(fmt.Errorf("import: %s already exists; choose a new file (import never overwrites one)", a.Out))
		}
	}
	catalogs := cfg.Catalogs
	if a.Catalog != "" {
		cat := cfg.CatalogByName(a.Catalog)
		if cat == nil {
			return c.fail(fmt.Errorf("import: catalog %q is not configured", a.Catalog))
		}
		catalogs = []*config.Catalog{cat}
	}
	ctx, sess, done := c.session(cfg)
	defer done()

	all, chosen, err := c.importable(ctx, sess, cfg, catalogs, a.Targets)
	if err != nil {
		return c.fail(fmt.Errorf("import: %w", err))
	}
	if len(chosen) == 0 {
		what := "no table"
		if len(a.Targets) > 0 {
			what = "no table matching -target"
		}
		return c.fail(fmt.Errorf("import: %s that this configuration does not manage already", what))
	}
	tables, imported, err := describeImported(ctx, sess, chosen)
	if err != nil {
		return c.fail(fmt.Errorf("import: %w", err))
	}
	taken := map[string]bool{}
	for name := range cfg.Policies {
		taken[name] = true
	}
	src := config.Generate(tables, config.GenerateOptions{
		// A selector may be written only where it takes over nothing
		// else: every table of the namespace is imported, and no selector
		// of the configuration could overlap it.
		Selectable: func(ns string) bool {
			if len(cfg.Selectors) > 0 {
				return false
			}
			for _, addr := range all {
				if in, _ := config.SplitNamespace(addr); in == ns && !imported[addr] {
					return false
				}
			}
			return true
		},
		Taken:   taken,
		Secrets: cfg.Secrets,
	})
	if a.Out == "" {
		if _, err := c.stdout.Write(src); err != nil {
			return c.fail(fmt.Errorf("import: write: %w", err))
		}
		return exitOK
	}
	if err := writeNew(out, src); err != nil {
		return c.fail(fmt.Errorf("import: %w", err))
	}
	fmt.Fprintf(c.stdout, "Wrote the policies of %d imported tables to %s. \"icewright plan\" shows no change for them.\n", len(tables), a.Out)
	return exitOK
}

// importable lists the catalogs' tables (all) and those to import: the
// ones -target selects that the configuration does not manage already
// (those are named on stderr).
func (c *cli) importable(ctx context.Context, sess *providers.Session, cfg *config.Config, catalogs []*config.Catalog, targets []string) (all, chosen []string, err error) {
	var managed []string
	for _, cat := range catalogs {
		addrs, err := sess.ListTables(ctx, cat.Name)
		if err != nil {
			return nil, nil, err
		}
		for _, addr := range addrs {
			all = append(all, addr)
			if !config.Targeted(targets, addr) {
				continue
			}
			if eff, ok := cfg.Resolve(addr); ok {
				managed = append(managed, fmt.Sprintf("%s (%s)", addr, eff.MatchedBy))
				continue
			}
			chosen = append(chosen, addr)
		}
	}
	if len(managed) > 0 {
		fmt.Fprintf(c.stderr, "Left out, managed by this configuration already: %s\n", strings.Join(managed, ", "))
	}
	return all, chosen, nil
}

// describeImported reads each chosen table's properties and sort order.
func describeImported(ctx context.Context, sess *providers.Session, chosen []string) ([]config.ImportedTable, map[string]bool, error) {
	imported := map[string]bool{}
	var tables []config.ImportedTable
	for _, addr := range chosen {
		st, err := sess.Describe(ctx, addr)
		if err != nil {
			return nil, nil, err
		}
		t := config.ImportedTable{Address: addr, Properties: st.Properties}
		for _, f := range st.SortOrder {
			t.SortOrder = append(t.SortOrder, config.SortField{Transform: f.Transform, Column: f.Column, Descending: f.Descending, NullsFirst: f.NullsFirst})
		}
		tables = append(tables, t)
		imported[addr] = true
	}
	return tables, imported, nil
}

// writeNew creates path with data, failing if it exists (O_EXCL, so a file
// created since the check is not replaced either).
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; choose a new file (import never overwrites one)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
