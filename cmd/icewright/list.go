package main

import (
	"fmt"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// List: `icewright list [-json] [-managed] [-var...] [-no-color]`.
type List struct {
	JSON    bool
	Managed bool
	Vars    Vars
	NoColor bool
}

func ParseList(args []string) (List, error) {
	var a List
	fs := newFlagSet("list")
	fs.BoolVar(&a.JSON, "json", false, "")
	fs.BoolVar(&a.Managed, "managed", false, "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 0, ""); err != nil {
		return a, err
	}
	return a, nil
}

// list prints every table of every configured catalog with the block that
// manages it (config.Resolve, the rule plan uses), or that none does. A
// catalog that cannot be listed is reported and the others still listed;
// the exit code is then 1.
func (c *cli) list(args []string) int {
	a, err := ParseList(args)
	if err != nil {
		return c.usage("list", err)
	}
	c.noColor = c.noColor || a.NoColor
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, sess, done := c.session(cfg)
	defer done()
	doc := views.TableList{Tables: []views.ListedTable{}, Errors: []views.ListError{}}
	for _, cat := range cfg.Catalogs {
		addrs, err := sess.ListTables(ctx, cat.Name)
		if err != nil {
			doc.Errors = append(doc.Errors, views.ListError{Catalog: cat.Name, Error: err.Error()})
			continue
		}
		for _, addr := range addrs {
			row := views.ListedTable{Address: addr, Catalog: cat.Name}
			if eff, ok := cfg.Resolve(addr); ok {
				row.Managed = true
				row.Policy = eff.PolicyName
				row.MatchedBy = eff.MatchedBy
				row.Origin = rangeString(eff.MatchRange)
			} else if a.Managed {
				continue
			} else {
				row.ExcludedBy = excludedBy(cfg, addr)
			}
			doc.Tables = append(doc.Tables, row)
		}
	}
	if a.JSON {
		err = views.ListJSON(c.stdout, &doc)
	} else {
		err = views.List(c.stdout, &doc, c.colorOut())
	}
	if err != nil {
		return c.fail(err)
	}
	for _, e := range doc.Errors {
		c.fail(fmt.Errorf("list catalog %q: %s", e.Catalog, e.Error))
	}
	if len(doc.Errors) > 0 {
		return exitError
	}
	return exitOK
}
