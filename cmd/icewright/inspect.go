package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/iceberg-go/catalog"
	"slices"
	"strings"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/inspect"
)

// inspect prints the health report of tables of the configured catalogs,
// managed or not: each address given, and every table each selector
// matches. A table that cannot be inspected is an error (exit 1); the
// others are still reported.
func (c *cli) inspect(args []string) int {
	a, err := ParseInspect(args)
	if err != nil {
		return c.usage("inspect", err)
	}
	c.noColor = c.noColor || a.NoColor
	for _, addr := range a.Addresses {
		if strings.Contains(addr, "*") {
			continue // a selector; one that matches nothing is an error below
		}
		if _, _, _, err := config.SplitAddress(addr); err != nil {
			return c.fail(fmt.Errorf("inspect %q: %w", addr, err))
		}
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, sess, done := c.session(cfg)
	defer done()
	addrs, err := inspectAddresses(ctx, cfg, sess, a.Addresses)
	if err != nil {
		return c.fail(err)
	}
	code := exitOK
	var reports []*diff.Inspection
	for _, addr := range addrs {
		in, err := inspect.Run(ctx, sess, addr, inspect.Options{PerPartition: a.Partitions})
		if err != nil {
			if errors.Is(err, catalog.ErrNoSuchTable) {
				err = withSuggestion(ctx, sess, addr, err)
			}
			code = c.fail(err)
			continue
		}
		reports = append(reports, in)
	}
	// One address gives one document, as it always did; a selector or
	// several addresses give an array of them.
	single := len(a.Addresses) == 1 && !strings.Contains(a.Addresses[0], "*")
	switch {
	case a.JSON && single && len(reports) == 1:
		err = views.InspectJSON(c.stdout, reports[0])
	case a.JSON && !single:
		err = views.InspectJSONList(c.stdout, reports)
	default:
		for i, in := range reports {
			if i > 0 {
				fmt.Fprintln(c.stdout)
			}
			if err = views.Inspect(c.stdout, in, c.colorOut()); err != nil {
				break
			}
		}
	}
	if err != nil {
		return c.fail(err)
	}
	return code
}

// inspectAddresses expands the selectors among args into the tables they
// match (the matcher of tables blocks and -target), in order, each table
// once. An address without a glob is kept as given, so that a table that
// does not exist is reported as such. A selector that matches nothing is
// an error with a did-you-mean.
func inspectAddresses(ctx context.Context, cfg *config.Config, sess *providers.Session, args []string) ([]string, error) {
	var out []string
	listed := map[string][]string{}
	for _, arg := range args {
		if !strings.Contains(arg, "*") {
			if !slices.Contains(out, arg) {
				out = append(out, arg)
			}
			continue
		}
		catPattern, _, _ := strings.Cut(arg, ".")
		var all, matched []string
		for _, cat := range cfg.Catalogs {
			if !config.MatchPattern(catPattern, cat.Name) && !strings.HasPrefix(catPattern, "**") {
				continue
			}
			addrs, ok := listed[cat.Name]
			if !ok {
				var err error
				if addrs, err = sess.ListTables(ctx, cat.Name); err != nil {
					return nil, fmt.Errorf("inspect %q: %w", arg, err)
				}
				listed[cat.Name] = addrs
			}
			all = append(all, addrs...)
			for _, addr := range addrs {
				if config.MatchPattern(arg, addr) {
					matched = append(matched, addr)
				}
			}
		}
		if len(matched) == 0 {
			msg := fmt.Sprintf("inspect %q: matches no table", arg)
			if s := config.SuggestPattern(arg, all); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, fmt.Errorf("%s", msg)
		}
		for _, addr := range matched {
			if !slices.Contains(out, addr) {
				out = append(out, addr)
			}
		}
	}
	return out, nil
}

// withSuggestion adds a did-you-mean to err, a table that does not exist,
// from the tables its catalog lists.
func withSuggestion(ctx context.Context, sess *providers.Session, addr string, err error) error {
	cat, _, _, serr := config.SplitAddress(addr)
	if serr != nil {
		return err
	}
	listed, lerr := sess.ListTables(ctx, cat)
	if lerr != nil {
		return err
	}
	if sug := config.SuggestPattern(addr, listed); sug != "" {
		return fmt.Errorf("%w; did you mean %q?", err, sug)
	}
	return err
}
