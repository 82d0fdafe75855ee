package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/apply/reconcile"
	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers"
)

// copyFleet copies every table of the sqlite fleet in src into a new fleet
// in dst (its own catalog.db and warehouse, paths rewritten by
// lakehouse.CopyTable), so that a benchmark may commit to the copy and
// leave the cached fleet as it was built.
func copyFleet(ctx context.Context, src, dst string) error {
	from, err := benchlake.Open(src)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := benchlake.Open(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	rows, err := from.DB.QueryContext(ctx, "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ?", benchlake.CatalogName)
	if err != nil {
		return err
	}
	type row struct{ ns, name, meta string }
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ns, &r.name, &r.meta); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i, r := range all {
		meta := strings.TrimPrefix(r.meta, "file://")
		tableDir := filepath.Dir(filepath.Dir(meta))
		current, err := filepath.Rel(tableDir, meta)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from.Dir, tableDir)
		if err != nil {
			return err
		}
		loc, err := lakehouse.CopyTable(tableDir, filepath.Join(to.Dir, rel), current, lakehouse.FileURIs())
		if err != nil {
			return fmt.Errorf("copy %s.%s: %w", r.ns, r.name, err)
		}
		if err := lakehouse.RegisterSQL(ctx, to.DB, benchlake.CatalogName, append(strings.Split(r.ns, "."), r.name), loc); err != nil {
			return err
		}
		if (i+1)%1000 == 0 {
			fmt.Fprintf(os.Stderr, "%d tables copied\n", i+1)
		}
	}
	fmt.Fprintf(os.Stderr, "%d tables copied to %s\n", len(all), dst)
	return nil
}

// usage is the process's wall time and CPU time so far.
type usage struct {
	wall time.Time
	cpu  time.Duration
}

func now() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return usage{wall: time.Now(), cpu: cpu}
}

func (u usage) since() string {
	n := now()
	return fmt.Sprintf("wall %d ms, CPU %d ms", n.wall.Sub(u.wall).Milliseconds(), (n.cpu - u.cpu).Milliseconds())
}

// reconcilePass measures, on the fleet of the configuration in cfgDir
// (one sqlite catalog over a copy: copyFleet; PostgreSQL's registering
// it; or a REST catalog's fleet, setupCatalog), what a reconcile pass
// costs once every ... th table (1/fraction) had a commit: the time to
// learn the metadata locations alone, a full plan of the fleet, and the
// pass (a listing of a reconciler that had observed every table, after the
// appends), each as wall and CPU time of this process. prefix, when set,
// is the fleet's namespace prefix: only its tables are appended to (a
// shared catalog holds others' tables too; the locations are still
// learned for the whole catalog, as the reconciler does). With
// applyActions the reconciler applies what it plans, and a full plan after
// the pass says how many tables are still out of policy: a table the
// appends took out of policy must be back in it within that one pass.
func reconcilePass(ctx context.Context, cfgDir string, fraction float64, par int, prefix string, applyActions bool) error {
	load := func() (*config.Config, hcl.Diagnostics, error) {
		cfg, diags := config.Load(cfgDir, config.LoadOptions{Env: os.Environ()})
		if diags.HasErrors() {
			return nil, nil, diags
		}
		return cfg, nil, nil
	}
	cfg, _, err := load()
	if err != nil {
		return err
	}
	open := func(cfg *config.Config) *providers.Session { return providers.Open(cfg, providers.Options{}) }
	cat := cfg.Catalogs[0].Name

	sess := open(cfg)
	u := now()
	locs, err := sess.MetadataLocations(ctx, cat)
	if err != nil {
		return err
	}
	fmt.Printf("metadata locations of %d tables: %s\n", len(locs), u.since())
	_ = sess.Close()

	sess = open(cfg)
	u = now()
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Parallelism: par})
	if err != nil {
		return err
	}
	fmt.Printf("full plan of %d tables (%d with actions, %d errors): %s\n", len(p.Tables), p.Summary.TablesChanged, len(p.Errors), u.since())
	_ = sess.Close()

	r := reconcile.New(load, open, reconcile.Options{Interval: 24 * time.Hour, Jitter: -1, Shadow: !applyActions, Parallelism: par})
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	h := r.Handler()
	// A listing that found changes ends with its plan of them.
	listings := func() float64 { return metricValue(h, `icewright_plan_duration_seconds_count{scope="listing"}`) }
	settled := func() bool {
		return metricValue(h, "icewright_reconciles_running") == 0 && metricValue(h, "icewright_queue_depth") == 0
	}
	u = now()
	for !r.Ready() || !settled() {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("reconcile, first listing (every table new): %s\n", u.since())

	appended, err := appendToFleet(ctx, cfgDir, locs, prefix, fraction)
	if err != nil {
		return err
	}
	fmt.Printf("appended to %d tables\n", appended)

	before := listings()
	u = now()
	r.Reload() // a listing now, as at the next interval
	// Polled every 20 ms, not faster: each look gathers the whole /metrics
	// (the process collector reads /proc), in this process, whose CPU time
	// is the pass's. At 5 ms the looks were about a tenth of a 1,000-table
	// REST pass's CPU profile.
	for listings() <= before || !settled() {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("reconcile pass after the appends: %s; observed as changed %v, skipped as unchanged %v\n", u.since(),
		metricValue(h, `icewright_tables_observed_total{reason="changed"}`), metricValue(h, "icewright_tables_skipped_total"))
	if applyActions {
		fmt.Printf("actions by outcome (the reconciler's /metrics, both passes): %s\n", actionOutcomes(h))
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	if !applyActions {
		return nil
	}
	sess = open(cfg)
	defer sess.Close()
	p, err = apply.Plan(ctx, cfg, sess, apply.PlanOptions{Parallelism: par})
	if err != nil {
		return err
	}
	fmt.Printf("full plan after the pass: %d tables, %d out of policy (with actions), %d errors\n", len(p.Tables), p.Summary.TablesChanged, len(p.Errors))
	if p.Summary.TablesChanged > 0 || len(p.Errors) > 0 {
		return fmt.Errorf("%d tables still out of policy after the pass, %d errors", p.Summary.TablesChanged, len(p.Errors))
	}
	return nil
}

// appendToFleet appends to fraction of the fleet's tables (of locs, those
// whose namespace has prefix), every 1/fraction-th in address order, and
// returns how many. The commits go through the configured catalog (the
// sqlite copy's, or PostgreSQL's that registered it).
func appendToFleet(ctx context.Context, cfgDir string, locs map[string]string, prefix string, fraction float64) (int, error) {
	writer, _, _, closeWriter, err := openConfigured(ctx, cfgDir)
	if err != nil {
		return 0, err
	}
	defer closeWriter()
	every := max(1, int(1/fraction))
	addrs := make([]string, 0, len(locs))
	for a := range locs {
		if ns := strings.Split(a, ".")[1]; strings.HasPrefix(ns, prefix) {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	appended := 0
	for i := 0; i < len(addrs); i += every {
		parts := strings.Split(addrs[i], ".")
		tbl, err := writer.LoadTable(ctx, parts[1:])
		if err != nil {
			return appended, err
		}
		if _, err := benchlake.Append(ctx, tbl, 1_000_000, 100, 3); err != nil {
			return appended, err
		}
		appended++
	}
	return appended, nil
}

// actionOutcomes sums the reconciler's icewright_actions_total by outcome
// ("done 100, failed 0"), sorted by outcome.
func actionOutcomes(h http.Handler) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sum := map[string]float64{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		labels, v, ok := strings.Cut(strings.TrimPrefix(line, "icewright_actions_total"), " ")
		if !ok || !strings.HasPrefix(line, "icewright_actions_total{") {
			continue
		}
		_, rest, _ := strings.Cut(labels, `outcome="`)
		outcome, _, _ := strings.Cut(rest, `"`)
		f, _ := strconv.ParseFloat(v, 64)
		sum[outcome] += f
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(sum)) {
		out = append(out, fmt.Sprintf("%s %v", k, sum[k]))
	}
	return strings.Join(out, ", ")
}

// metricValue is the value of one series of the reconciler's /metrics (0
// when absent).
func metricValue(h http.Handler, series string) float64 {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}
