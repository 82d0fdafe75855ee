package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/diff/planfile"
	"github.com/icewright/icewright/providers"
)

// DefaultParallelism is docs/design.md §5.4's -parallelism default.
const DefaultParallelism = 4

// PlanOptions are the inputs of Plan besides the configuration.
type PlanOptions struct {
	Targets     []string // -target addresses or globs; empty = every managed table
	Parallelism int      // tables observed at once; 0 = config's, else DefaultParallelism
	Now         func() time.Time
	Version     string // icewright version, recorded in the plan
	Progress    func(Event)
	// ConfigWarnings are the configuration's lint warnings (config.Load's
	// warning diagnostics); the plan carries them as warnings[] with their
	// file:line, so a pull-request bot sees them, not only stderr.
	ConfigWarnings hcl.Diagnostics
	// SetMemoryLimit is runtime/debug.SetMemoryLimit, or nil to leave the
	// Go soft memory limit alone (a user's GOMEMLIMIT). With it, the limit
	// is PlanMemoryLimit while the tables are observed (never above the
	// limit in force before) and restored afterwards.
	SetMemoryLimit func(int64) int64
	// NextDue sets each table plan's NextDue (diff.NextDue on the state
	// observed): reconcile observes an unchanged table again then.
	NextDue bool
}

// Observation holds, per table observed at once, about 35 MiB of sorter
// buffers (three external sorters of 8 MiB of strings plus their records,
// see providers), decoded manifest batches and the partition aggregate;
// planBaseline is the rest (catalogs, configuration, the plan). Without a
// soft limit Go lets garbage grow to the size of the live heap before it
// collects, so a plan of a table with millions of files peaked at about
// twice what it holds (measured in docs/benchmarks.md, "Orphans").
const (
	planBaseline = 96 << 20
	planPerTable = 48 << 20
)

// PlanMemoryLimit is the soft memory limit for observing tables tables at
// once. It is soft: past it the collector works harder (the runtime caps
// that at about half the CPU), nothing fails.
func PlanMemoryLimit(tables int) int64 {
	return planBaseline + int64(max(tables, 1))*planPerTable
}

// backend is what apply needs from providers.Session; an interface so the
// orchestration can be exercised on real tables without the CLI, and so
// that another engine's executors can stand in (Executor). Tables are
// opaque handles: apply knows no iceberg-go type (docs/design.md §7).
type backend interface {
	ListTables(ctx context.Context, catalog string) ([]string, error)
	Observe(ctx context.Context, pol *config.Effective) (*diff.TableState, error)
	ObservePlan(ctx context.Context, pol *config.Effective) (*providers.Observation, error)
	Table(ctx context.Context, address string) (*providers.Table, error)
	TakeLease(ctx context.Context, tbl *providers.Table, lease providers.Lease, now time.Time) (*providers.HeldLease, error)
	Executor(t diff.ActionType) (providers.Executor, bool)
}

// Plan observes every managed table and diffs it against its policy. One
// table's failure (or an unreachable catalog) is recorded in Plan.Errors and
// never stops the others. Tables come sorted by address; tables with nothing
// to do are included with empty Actions.
func Plan(ctx context.Context, cfg *config.Config, sess *providers.Session, opts PlanOptions) (*diff.Plan, error) {
	return plan(sess.WithStorageLimits(ctx), cfg, sess, opts)
}

// planItem is a table to plan. Its policy is resolved when the table is
// planned (planOne), not when it is selected: a resolved policy is about
// 8 KB (7.7 MB a 1,000 tables in a heap profile), and holding one per table
// from the listing to the end of the plan was about 80 MB of live heap at
// 10,000 tables, which every collection marked again and which, under the
// plan's soft memory limit (PlanMemoryLimit), made the collector run more
// often and the observers assist it (issue 44: the plan's CPU per table grew
// with the fleet).
type planItem struct {
	address string
}

func plan(ctx context.Context, cfg *config.Config, b backend, opts PlanOptions) (*diff.Plan, error) {
	if cfg == nil {
		return nil, fmt.Errorf("plan: no configuration")
	}
	now := clock(opts.Now)
	p := &diff.Plan{
		FormatVersion:    diff.FormatVersion,
		IcewrightVersion: opts.Version,
		CreatedAt:        now().UTC(),
		ConfigDigest:     cfg.Digest,
		Targets:          slices.Clone(opts.Targets),
		Tables:           []diff.TablePlan{},
		Errors:           []diff.TableError{},
		Warnings:         configWarnings(opts.ConfigWarnings),
	}
	items, errs, warns := selectTables(ctx, cfg, listingProgress{b, opts.Progress}, opts.Targets)
	p.Errors = append(p.Errors, errs...)
	p.Warnings = append(p.Warnings, slices.DeleteFunc(warns, func(w diff.Warning) bool { return cfg.Ignores(w.Code) })...)

	par := parallelism(opts.Parallelism, cfg)
	if set := opts.SetMemoryLimit; set != nil && len(items) > 0 {
		prev := set(-1)
		set(min(prev, PlanMemoryLimit(min(par, len(items)))))
		defer set(prev)
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, par)
	)
	for _, it := range items {
		if ctx.Err() != nil {
			mu.Lock()
			p.Errors = append(p.Errors, diff.TableError{Address: it.address, Message: "not planned: " + ctx.Err().Error()})
			mu.Unlock()
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(it planItem) {
			defer wg.Done()
			defer func() { <-sem }()
			emit(opts.Progress, Event{Table: it.address, Phase: PhaseObserve, Total: int64(len(items)), Unit: "tables"})
			tp, err := planOne(ctx, cfg, b, it, now(), opts.NextDue)
			emit(opts.Progress, Event{Table: it.address, Phase: PhasePlanned, Err: err})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				p.Errors = append(p.Errors, diff.TableError{Address: it.address, Message: err.Error()})
				return
			}
			p.Tables = append(p.Tables, *tp)
		}(it)
	}
	wg.Wait()
	dropIgnoredWarnings(cfg, p)
	slices.SortFunc(p.Tables, func(a, b diff.TablePlan) int { return strings.Compare(a.Address, b.Address) })
	slices.SortFunc(p.Errors, func(a, b diff.TableError) int {
		if c := strings.Compare(a.Address, b.Address); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	diff.Summarize(p)
	sum, err := planfile.Checksum(p)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	p.Checksum = sum
	return p, nil
}

// configWarnings turns lint diagnostics into plan warnings, in the order
// validate prints them.
func configWarnings(diags hcl.Diagnostics) []diff.Warning {
	out := []diff.Warning{}
	for _, d := range diags {
		if d.Severity != hcl.DiagWarning {
			continue
		}
		var origin string
		if d.Subject != nil {
			origin = rangeOrigin(*d.Subject)
		}
		w := diff.NewWarning(config.LintCode(d), d.Summary, origin)
		w.Detail = d.Detail
		out = append(out, w)
	}
	return out
}

// dropIgnoredWarnings removes from each table the warnings the
// configuration's ignore_warnings names (config.Load already dropped the
// configuration's own).
func dropIgnoredWarnings(cfg *config.Config, p *diff.Plan) {
	for i := range p.Tables {
		t := &p.Tables[i]
		t.Warnings = slices.DeleteFunc(t.Warnings, func(w diff.Warning) bool { return cfg.Ignores(w.Code) })
		if len(t.Warnings) == 0 {
			t.Warnings = nil
		}
	}
}

// planOne observes one table and diffs it (providers.Observation.Plan,
// which inspect's recommendations use too).
func planOne(ctx context.Context, cfg *config.Config, b backend, it planItem, now time.Time, nextDue bool) (*diff.TablePlan, error) {
	pol, ok := cfg.Resolve(it.address)
	if !ok {
		// selectTables resolved it: the configuration does not change.
		return nil, fmt.Errorf("observe %s: no policy manages it", it.address)
	}
	o, err := b.ObservePlan(ctx, pol)
	if err != nil {
		return nil, err // providers already says "observe <address>: ..."
	}
	defer o.Close()
	st := o.State
	if st.Address == "" {
		st.Address = it.address
	}
	tp, err := o.Plan(ctx, now)
	if err != nil {
		return nil, err
	}
	if nextDue {
		tp.NextDue, tp.DueRule = diff.NextDue(pol, st, now)
	}
	return &tp, nil
}

// selectTables lists every catalog and keeps the tables the configuration
// manages and the targets name. An explicit table block whose table does
// not exist is an error for its address; a catalog that cannot be listed is
// an error for each of its table blocks and selectors, with one message.
// What matches nothing is a warning with a did-you-mean (listingWarnings).
func selectTables(ctx context.Context, cfg *config.Config, b backend, targets []string) ([]planItem, []diff.TableError, []diff.Warning) {
	var (
		items []planItem
		errs  []diff.TableError
	)
	targeted := targetSet(targets)
	declared := map[string]bool{}
	for _, c := range cfg.Catalogs {
		declared[c.Name] = true
	}
	for _, tb := range cfg.Tables {
		cat, _, _, err := config.SplitAddress(tb.Address)
		if err == nil && !declared[cat] && targeted(tb.Address) {
			errs = append(errs, diff.TableError{Address: tb.Address, Message: fmt.Sprintf("catalog %q is not declared", cat)})
		}
	}
	l := listing{unreachable: map[string]bool{}}
	for _, c := range cfg.Catalogs {
		addrs, err := b.ListTables(ctx, c.Name)
		if err != nil {
			l.unreachable[c.Name] = true
			// The same message for every address it blocks, so that the
			// views report it once with their count.
			msg := fmt.Sprintf("catalog %q unreachable: %s", c.Name, catalogCause(c.Name, err))
			var reached interface{ Reached() bool }
			if errors.As(err, &reached) && reached.Reached() {
				// The server answered (a refused login, a missing
				// warehouse): not "unreachable", and the cause says what.
				msg = fmt.Sprintf("catalog %q: %s", c.Name, catalogCause(c.Name, err))
			}
			for _, tb := range cfg.Tables {
				if strings.HasPrefix(tb.Address, c.Name+".") && targeted(tb.Address) {
					errs = append(errs, diff.TableError{Address: tb.Address, Message: msg})
				}
			}
			for _, s := range cfg.Selectors {
				if strings.HasPrefix(s.Pattern, c.Name+".") || strings.HasPrefix(s.Pattern, "*") {
					errs = append(errs, diff.TableError{Address: s.Pattern, Message: msg})
				}
			}
			continue
		}
		if len(addrs) == 0 {
			l.empty = append(l.empty, c)
		}
		exists := map[string]bool{}
		for _, a := range addrs {
			if !strings.HasPrefix(a, c.Name+".") {
				a = c.Name + "." + a
			}
			exists[a] = true
			l.existing = append(l.existing, a)
			if _, ok := cfg.Resolve(a); !ok {
				continue
			}
			l.managed = append(l.managed, a)
			if targeted(a) {
				items = append(items, planItem{address: a})
			}
		}
		var sorted []string // the catalog's addresses, for did-you-means
		missing := 0
		for _, tb := range cfg.Tables {
			if strings.HasPrefix(tb.Address, c.Name+".") && !exists[tb.Address] && targeted(tb.Address) {
				msg := fmt.Sprintf("table %s does not exist in catalog %q (declared at %s)", tb.Address, c.Name, rangeOrigin(tb.DeclRange))
				// A did-you-mean compares the address with every table of
				// the catalog: for the first missing tables only, or 185,000
				// table blocks against a large catalog would take hours.
				if missing++; missing <= maxMissingSuggestions {
					if sorted == nil {
						sorted = slices.Sorted(maps.Keys(exists))
					}
					if sug := config.SuggestPattern(tb.Address, sorted); sug != "" {
						msg += fmt.Sprintf("; did you mean %q?", sug)
					}
				}
				errs = append(errs, diff.TableError{Address: tb.Address, Message: msg})
			}
		}
	}
	slices.SortFunc(items, func(a, b planItem) int { return strings.Compare(a.address, b.address) })
	if lp, ok := b.(listingProgress); ok {
		b = lp.backend // its did-you-mean asks the session itself (sqlCatalogNames)
	}
	return items, errs, l.warnings(ctx, cfg, b, targets)
}

// maxMissingSuggestions is how many table blocks of one catalog naming a
// table that does not exist get a did-you-mean in the plan.
const maxMissingSuggestions = 100

// catalogCause is a listing error without the `catalog "NAME": ` its
// backend put in front, so that the plan's message names the catalog once.
func catalogCause(name string, err error) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("catalog %q: ", name))
}

// listing is what selectTables learnt from the catalogs it could list.
type listing struct {
	existing    []string // every listed table
	managed     []string // those the configuration manages
	empty       []*config.Catalog
	unreachable map[string]bool
}

// sqlCatalogNames is implemented by a backend that can read which catalog
// names a SQL catalog's database holds tables under: a SQL catalog's label
// is the catalog_name it reads, so a label that differs lists nothing.
type sqlCatalogNames interface {
	SQLCatalogNames(ctx context.Context, catalog string) ([]string, error)
	OtherCatalogNames(ctx context.Context, catalog string) ([]string, error)
}

// warnings are the plan's nothing-matched warnings: a catalog that lists
// no table, a selector that matches no table and a -target that matches no
// managed table, each with a did-you-mean from the names the catalogs do
// have. What may match a catalog that could not be listed is not warned
// about: its error says why.
func (l *listing) warnings(ctx context.Context, cfg *config.Config, b backend, targets []string) []diff.Warning {
	var out []diff.Warning
	for _, c := range l.empty {
		w := diff.NewWarning(diff.WarnCatalogEmpty, fmt.Sprintf("catalog %q lists no table", c.Name), rangeOrigin(c.DeclRange))
		if n, ok := b.(sqlCatalogNames); ok && c.Type == "sql" {
			names, err := n.SQLCatalogNames(ctx, c.Name)
			switch {
			case err != nil:
				w.Detail = fmt.Sprintf("Its database's catalog names could not be read: %v.", err)
			case len(names) > 0:
				w.Message += fmt.Sprintf("; its database has tables under catalog_name %s: did you mean catalog %q?",
					strings.Join(quoteAll(names), ", "), closest(c.Name, names))
				w.Detail = "A SQL catalog's label is the catalog_name it reads in the iceberg_tables table; " +
					"label the catalog block (and the addresses under it) with the name its tables have."
			}
		}
		out = append(out, w)
	}
	// A SQL catalog's database that holds tables under other catalog names
	// too: they count as other tables for the sweep and expiry.
	if n, ok := b.(sqlCatalogNames); ok {
		for _, c := range cfg.Catalogs {
			if c.Type != "sql" || l.unreachable[c.Name] || slices.Contains(l.empty, c) {
				continue
			}
			if names, err := n.OtherCatalogNames(ctx, c.Name); err == nil && len(names) > 0 {
				msg, detail := diff.CatalogNamesShared(c.Name, names)
				w := diff.NewWarning(diff.WarnCatalogNameShared, msg, rangeOrigin(c.DeclRange))
				w.Detail = detail
				out = append(out, w)
			}
		}
	}
	blocked := func(pattern string) bool {
		cat, _, _ := strings.Cut(pattern, ".")
		if strings.Contains(cat, "*") {
			return len(l.unreachable) > 0
		}
		return l.unreachable[cat] || slices.ContainsFunc(l.empty, func(c *config.Catalog) bool { return c.Name == cat })
	}
	for _, s := range cfg.Selectors {
		if blocked(s.Pattern) || slices.ContainsFunc(l.existing, func(a string) bool { return config.MatchPattern(s.Pattern, a) }) {
			continue
		}
		w := diff.NewWarning(diff.WarnSelectorNoMatch, fmt.Sprintf("tables %q matches no table", s.Pattern), rangeOrigin(s.DeclRange))
		if sug := config.SuggestPattern(s.Pattern, l.existing); sug != "" {
			w.Message += fmt.Sprintf("; did you mean %q?", sug)
		}
		out = append(out, w)
	}
	managed := make(map[string]bool, len(l.managed))
	for _, a := range l.managed {
		managed[a] = true
	}
	for _, t := range targets {
		if blocked(t) || managed[t] || slices.ContainsFunc(l.managed, func(a string) bool { return config.MatchPattern(t, a) }) {
			continue
		}
		w := diff.NewWarning(diff.WarnTargetNoMatch, fmt.Sprintf("-target %q matches no managed table", t), "")
		if sug := config.SuggestPattern(t, l.managed); sug != "" {
			w.Message += fmt.Sprintf("; did you mean %q?", sug)
		}
		out = append(out, w)
	}
	return out
}

// closest is the name nearest to given: the one there is, or the one a
// typo away, else the first.
func closest(given string, names []string) string {
	if s := config.Suggest(given, names); s != "" {
		return s
	}
	return names[0]
}

func rangeOrigin(r hcl.Range) string {
	if r.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

func quoteAll(items []string) []string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return q
}

func parallelism(n int, cfg *config.Config) int {
	if n > 0 {
		return n
	}
	if cfg != nil && cfg.Settings.Parallelism > 0 {
		return cfg.Settings.Parallelism
	}
	return DefaultParallelism
}

func clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// targetSet is config.Targeted over targets, with the addresses that are no
// pattern looked up in a set: reconcile plans thousands of named tables.
func targetSet(targets []string) func(string) bool {
	if len(targets) == 0 {
		return func(string) bool { return true }
	}
	named := map[string]bool{}
	var patterns []string
	for _, t := range targets {
		if strings.ContainsAny(t, "*?[") {
			patterns = append(patterns, t)
		} else {
			named[t] = true
		}
	}
	return func(addr string) bool { return named[addr] || len(patterns) > 0 && config.Targeted(patterns, addr) }
}
