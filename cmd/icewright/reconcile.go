package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/apply/reconcile"
	"github.com/icewright/icewright/cmd/icewright/internal/views"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// Reconcile: `icewright reconcile [-interval=1h] [-listen=ADDR] [-once]
// [-shadow] [-parallelism=N] [-table-metrics] [-lease-ttl=D] [-budget=SIZE]
// [-max-deletes=N] [-min-interval=KIND=D]... [-watch=D] [-var...]`.
type Reconcile struct {
	Interval     time.Duration
	Listen       string
	Once         bool
	Shadow       bool
	Parallelism  int
	TableMetrics bool
	LeaseTTL     time.Duration
	Budget       string // -budget=SIZE: compaction input per interval, whole fleet
	MaxDeletes   int64
	// MinIntervals: -min-interval=KIND=DURATION, repeatable.
	MinIntervals map[diff.ActionType]time.Duration
	// Watch is how often the configuration's files are checked for a
	// change that reloads them (0: only SIGHUP reloads).
	Watch   time.Duration
	Vars    Vars
	NoColor bool
}

// DefaultWatch is how often reconcile checks its configuration's files:
// a few small files read and hashed, so often enough that an edit (or a
// ConfigMap update) takes effect within seconds of landing.
const DefaultWatch = 10 * time.Second

func ParseReconcile(args []string) (Reconcile, error) {
	var a Reconcile
	fs := newFlagSet("reconcile")
	fs.DurationVar(&a.Interval, "interval", reconcile.DefaultInterval, "")
	fs.StringVar(&a.Listen, "listen", "127.0.0.1:9464", "")
	fs.BoolVar(&a.Once, "once", false, "")
	fs.BoolVar(&a.Shadow, "shadow", false, "")
	fs.IntVar(&a.Parallelism, "parallelism", 0, "")
	fs.BoolVar(&a.TableMetrics, "table-metrics", false, "")
	fs.DurationVar(&a.LeaseTTL, "lease-ttl", apply.DefaultLeaseTTL, "")
	fs.StringVar(&a.Budget, "budget", "", "")
	fs.Int64Var(&a.MaxDeletes, "max-deletes", 0, "")
	var mins stringList
	fs.Var(&mins, "min-interval", "")
	fs.DurationVar(&a.Watch, "watch", DefaultWatch, "")
	addVarFlags(fs, &a.Vars)
	fs.BoolVar(&a.NoColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	// -once serves no endpoint unless -listen asks for one: a one-shot
	// run (a CronJob, a CI job) needs no port, and one taken must not fail it.
	listenSet := false
	fs.Visit(func(f *flag.Flag) { listenSet = listenSet || f.Name == "listen" })
	if a.Once && !listenSet {
		a.Listen = ""
	}
	if err := maxArgs(fs, 0, ""); err != nil {
		return a, err
	}
	if a.Interval < time.Second {
		return a, fmt.Errorf("reconcile: -interval must be at least 1s, got %s", a.Interval)
	}
	if a.Watch < 0 || (a.Watch > 0 && a.Watch < 100*time.Millisecond) {
		return a, fmt.Errorf("reconcile: -watch must be 0 (reload on SIGHUP only) or at least 100ms, got %s", a.Watch)
	}
	if a.Parallelism < 0 {
		return a, fmt.Errorf("reconcile: -parallelism must be at least 1, got %d", a.Parallelism)
	}
	if a.Budget != "" {
		if _, err := config.ParseSize(a.Budget); err != nil {
			return a, fmt.Errorf("reconcile: -budget: %w", err)
		}
	}
	for _, m := range mins {
		kind, d, ok := strings.Cut(m, "=")
		dur, err := time.ParseDuration(d)
		if !ok || err != nil || dur <= 0 {
			return a, fmt.Errorf("reconcile: -min-interval=%s: want KIND=DURATION, such as remove_orphan_files=24h", m)
		}
		if _, known := diff.KindOf(diff.ActionType(kind)); !known {
			var names []string
			for _, k := range diff.Kinds() {
				names = append(names, string(k))
			}
			return a, fmt.Errorf("reconcile: -min-interval=%s: unknown action kind %q (one of %s)", m, kind, strings.Join(names, ", "))
		}
		if a.MinIntervals == nil {
			a.MinIntervals = map[diff.ActionType]time.Duration{}
		}
		a.MinIntervals[diff.ActionType(kind)] = dur
	}
	if a.MaxDeletes < 0 {
		return a, fmt.Errorf("reconcile: -max-deletes must be 0 (no cap) or more, got %d", a.MaxDeletes)
	}
	if a.LeaseTTL < 4*time.Second {
		// Renewed every TTL/4: below a second the heartbeat would be a
		// storm of writes on the table's location.
		return a, fmt.Errorf("reconcile: -lease-ttl must be at least 4s, got %s", a.LeaseTTL)
	}
	return a, nil
}

// reconcile runs the reconciler until SIGTERM or Ctrl-C (running
// reconciles finish their commits; a second signal stops them at once),
// reloading the configuration on SIGHUP or when its files change
// (-watch). The endpoints are served on
// -listen (-listen="" serves none).
func (c *cli) reconcile(args []string) int {
	a, err := ParseReconcile(args)
	if err != nil {
		return c.usage("reconcile", err)
	}
	c.noColor = c.noColor || a.NoColor
	// The first load prints its diagnostics as every command does; a
	// configuration with errors stops here.
	cfg, warnings, ok := c.loadConfigWarnings(a.Vars, true)
	if !ok {
		return exitError
	}
	first := true
	load := func() (*config.Config, hcl.Diagnostics, error) {
		if first {
			first = false
			return cfg, warnings, nil
		}
		cfg, diags := c.readConfig(a.Vars, true)
		if diags.HasErrors() || cfg == nil {
			return nil, nil, fmt.Errorf("configuration has errors: %s", diags.Error())
		}
		var w hcl.Diagnostics
		for _, d := range diags {
			if d.Severity == hcl.DiagWarning {
				w = append(w, d)
			}
		}
		return cfg, w, nil
	}
	open := func(cfg *config.Config) *providers.Session {
		return providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	abort, cancelAbort := context.WithCancel(context.Background())
	defer cancelAbort()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	var budget int64
	if a.Budget != "" {
		budget, _ = config.ParseSize(a.Budget) // checked by ParseReconcile
	}
	r := reconcile.New(load, open, reconcile.Options{
		BytesPerInterval: budget, MaxDeletes: a.MaxDeletes, MinIntervals: a.MinIntervals,
		Interval: a.Interval, Shadow: a.Shadow, Once: a.Once, Parallelism: a.Parallelism,
		TableMetrics: a.TableMetrics, Now: c.now, Log: c.logger(), Version: version,
		Apply: applyTemplate(c, abort, a.LeaseTTL),
		Watch: a.Watch,
		Sources: func() (string, error) {
			return config.SourceDigest(c.configDir(), a.Vars.VarFiles)
		},
	})
	go func() {
		stops := 0
		for s := range sigs {
			if s == syscall.SIGHUP {
				c.logger().Info("SIGHUP: reloading the configuration")
				r.Reload()
				continue
			}
			stops++
			if stops == 1 {
				fmt.Fprintf(c.stderr, "%s received: no new reconcile starts; running ones finish their commits. Again to stop at once.\n", signalName(s))
				stop()
				continue
			}
			cancelAbort()
		}
	}()

	if a.Listen != "" {
		ln, err := net.Listen("tcp", a.Listen)
		if err != nil {
			return c.fail(fmt.Errorf("reconcile: -listen=%s: %w (choose another address with -listen=ADDR, or -listen=\"\" to serve none)", a.Listen, err))
		}
		srv := &http.Server{Handler: r.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		fmt.Fprintf(c.stderr, "icewright reconcile: serving /metrics, /status, /healthz, /readyz and POST /trigger on http://%s\n", ln.Addr())
	}
	if err := r.Run(ctx); err != nil {
		return c.fail(err)
	}
	if a.Once {
		bad := c.reconcileResults(r.Status())
		if bad > 0 {
			return c.fail(fmt.Errorf("%d tables failed or could not be planned", bad))
		}
	}
	return exitOK
}

// applyTemplate is what every apply of the reconciler shares: leases named
// after this process, the memory limit, the abort.
func applyTemplate(c *cli, abort context.Context, leaseTTL time.Duration) (o apply.ApplyOptions) {
	o.LeaseTTL = leaseTTL
	o.SetMemoryLimit = memoryLimitSetter(c.env)
	o.Abort = abort
	o.LockOwner = c.lockOwner() + " (reconcile)"
	o.RunID = uuid.NewString()
	return o
}

// reconcileResults prints what reconcile -once did, as apply prints its
// results: one line per table on stdout, then the counts by outcome, and
// each failure on stderr. It returns how many tables failed or could not be
// planned.
func (c *cli) reconcileResults(status []reconcile.TableStatus) (bad int) {
	slices.SortFunc(status, func(a, b reconcile.TableStatus) int { return strings.Compare(a.Address, b.Address) })
	counts := map[string]int{}
	for _, s := range status {
		counts[s.Result]++
		line := s.Address + ": " + strings.ReplaceAll(s.Result, "_", " ")
		switch {
		case s.Error != "":
			line += " (see the error below)"
		case len(s.PendingActions) > 0:
			line += " (" + strings.Join(s.PendingActions, ", ") + ")"
		}
		fmt.Fprintln(c.stdout, line)
		if s.Result == reconcile.ResultFailed || s.Result == reconcile.ResultError {
			bad++
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", s.Address, s.Result, s.Error)
		}
	}
	var parts []string
	for _, r := range []string{reconcile.ResultApplied, reconcile.ResultPlanned, reconcile.ResultInPolicy, reconcile.ResultSkipped,
		reconcile.ResultInterrupted, reconcile.ResultFailed, reconcile.ResultError, reconcile.ResultNew} {
		if n := counts[r]; n > 0 || r == reconcile.ResultFailed {
			label := strings.ReplaceAll(r, "_", " ")
			if r == reconcile.ResultError {
				label = "could not be planned"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	fmt.Fprintf(c.stdout, "\nReconcile complete: %s; %s.\n", views.CountOf(len(status), "table", "tables"), strings.Join(parts, ", "))
	return bad
}
