// Package reconcile is `icewright reconcile`: maintenance that never stops. It
// is a loop over apply's own Plan and Apply (no second planner), in the
// controller-runtime pattern: one reconcile per table, from a work queue
// ordered by when each table is due. A table in policy is planned again
// after the interval; a table out of policy is applied (unless shadow) and
// planned again after the interval; a writer's hint (Trigger) brings a
// table forward. The table is the truth: each reconcile observes it again.
//
// Many reconcilers may run on one lakehouse: every apply takes the table's
// lease (docs/design.md §5.4, Locking) and a table another holds is a skip,
// so no action runs twice, and a killed reconciler's tables are taken over
// once its leases expire.
package reconcile

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// DefaultInterval is how long a table waits between two reconciles.
const DefaultInterval = time.Hour

// Loader reads the configuration in force: at start, and again on Reload.
// Warnings are kept for the plans; errors keep the previous configuration.
type Loader func() (*config.Config, hcl.Diagnostics, error)

// Opener opens a session on a configuration (providers.Open).
type Opener func(*config.Config) *providers.Session

// Options are the reconciler's settings besides the configuration.
type Options struct {
	// Interval is the time between two reconciles of a table, and between
	// two listings of the catalogs (new tables are found then); 0 =
	// DefaultInterval.
	Interval time.Duration
	// Jitter spreads due times by up to this fraction of Interval (0 =
	// 0.1), so a fleet does not start at once; negative = none.
	Jitter float64
	// Shadow plans and reports, and never applies.
	Shadow bool
	// Once reconciles every table once, then Run returns.
	Once bool
	// Parallelism is how many tables are reconciled at once (0 = the
	// configuration's, else apply.DefaultParallelism).
	Parallelism int
	// Debounce is how soon a triggered table is reconciled (hints arriving
	// meanwhile are one); 0 = 5s.
	Debounce time.Duration
	// Apply is the template of every apply: the lease owner, memory limit,
	// abort. Lock and LockSkipOK are always on (another reconciler's table
	// is a skip, not a failure).
	Apply apply.ApplyOptions
	// TableMetrics adds per-table series (a label per table: only where the
	// fleet is small enough for the metrics backend).
	TableMetrics bool
	Now          func() time.Time
	Log          *slog.Logger
	Version      string
	// Rand draws the jitter (nil: a random source); tests fix it.
	Rand *rand.Rand
	// BytesPerInterval bounds the compaction input of the whole fleet per
	// interval (0: none): a table whose compaction would pass it keeps its
	// other actions and compacts in a later interval. Each policy's
	// compaction.max_bytes_per_run still bounds one table's run.
	BytesPerInterval int64
	// MinIntervals is the least time between two runs of an action kind on
	// one table (an orphan sweep daily while compaction runs every
	// interval); a kind run more recently than that is left out of the
	// table's apply. Kinds not named have none.
	MinIntervals map[diff.ActionType]time.Duration
	// MaxDeletes holds an expiry or orphan sweep that would delete more
	// files than this in one run (0: none) for a person to review: it is
	// skipped, named in /status, and `icewright apply` runs it.
	MaxDeletes int64
	// Sources is a digest of the configuration's files
	// (config.SourceDigest); with Watch set, the reconciler asks for it
	// every Watch and reloads when it changes, as on SIGHUP.
	Sources func() (string, error)
	Watch   time.Duration
}

// TableStatus is one table's state, as /status shows it.
type TableStatus struct {
	Address string `json:"address"`
	// Policy and PolicyDigest are the policy the last plan applied.
	Policy       string `json:"policy,omitempty"`
	PolicyDigest string `json:"policy_digest,omitempty"`
	// MetadataLocation is the table's metadata last seen.
	MetadataLocation string `json:"metadata_location,omitempty"`
	// Result is the last reconcile's outcome: in_policy, applied, failed,
	// skipped (locked by another run, or nothing left to do), planned
	// (shadow: what apply would do is in PendingActions), interrupted or
	// error (the table could not be planned).
	Result         string    `json:"result"`
	Error          string    `json:"error,omitempty"`
	PendingActions []string  `json:"pending_actions,omitempty"`
	LastRun        time.Time `json:"last_run,omitzero"`
	// LastObserved is when the table was last planned (at a listing or a
	// reconcile).
	LastObserved time.Time `json:"last_observed,omitzero"`
	// NextDue is when the table is reconciled next; zero for a table in
	// policy that no time-based rule can put out of policy (it is observed
	// again when its metadata or its policy changes, or a writer triggers
	// it). DueRule names the rule that makes a table in policy due
	// (diff.NextDue).
	NextDue time.Time `json:"next_due,omitzero"`
	DueRule string    `json:"due_rule,omitempty"`
	Runs    int       `json:"runs"`
	// LastDone is when each action kind last ran to completion on the
	// table (by this reconciler), for MinIntervals.
	LastDone map[diff.ActionType]time.Time `json:"last_done,omitempty"`
}

// Results of a reconcile, in TableStatus.Result.
const (
	ResultInPolicy    = "in_policy"
	ResultApplied     = "applied"
	ResultFailed      = "failed"
	ResultSkipped     = "skipped"
	ResultPlanned     = "planned"
	ResultInterrupted = "interrupted"
	ResultError       = "error"
	ResultNew         = "new" // found, not reconciled yet
)

// Reconciler is the loop. Make one with New, run it with Run; Handler
// serves its endpoints while it runs.
type Reconciler struct {
	opts    Options
	load    Loader
	open    Opener
	metrics *metrics

	mu       sync.Mutex
	cfg      *config.Config
	warnings hcl.Diagnostics
	sess     *providers.Session
	tables   map[string]*entry
	queue    dueQueue
	running  map[string]bool
	// lastListing is when the catalogs were last listed; zero = never.
	lastListing time.Time
	// listedDigest is the configuration digest of the last listing: when
	// it changes, each table's policy digest is compared with its last
	// plan's.
	listedDigest string
	reload       bool
	// budgetUsed is compaction input reserved or rewritten since the last
	// listing (BytesPerInterval).
	budgetUsed int64

	wake  chan struct{}
	ready atomic.Bool
}

type entry struct {
	status TableStatus
	index  int // in queue; -1 when not queued (running, or in policy with no due time)
	// reason is why the table is queued, counted when it is observed
	// (Observe* constants); "" when the listing observed it already.
	reason string
}

// Why a table is observed (icewright_tables_observed_total's reason):
// docs/reconcile.md.
const (
	ObserveNew     = "new"         // first seen at a listing
	ObserveChanged = "changed"     // its metadata location changed
	ObservePolicy  = "policy"      // the configuration gives it another policy
	ObserveTrigger = "trigger"     // a writer's hint
	ObserveRetry   = "error-retry" // its last plan or apply failed, or its catalog was unreachable
	ObservePending = "pending"     // its last plan left actions (held, shadow, locked)
	ObserveDue     = "due:"        // + the diff.NextDue rule that came due
)

// New makes a reconciler; it loads nothing until Run.
func New(load Loader, open Opener, opts Options) *Reconciler {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	switch {
	case opts.Once:
		opts.Jitter = -1 // one pass, at once
	case opts.Jitter == 0:
		opts.Jitter = 0.1
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	opts.Apply.Lock = true
	opts.Apply.LockSkipOK = true
	return &Reconciler{
		opts: opts, load: load, open: open, metrics: newMetrics(opts.TableMetrics),
		tables: map[string]*entry{}, running: map[string]bool{}, wake: make(chan struct{}, 1),
	}
}

// Reload asks for the configuration to be read again (SIGHUP): between
// reconciles, once those running have finished. A configuration with
// errors is refused and the one in force stays.
func (r *Reconciler) Reload() {
	r.mu.Lock()
	r.reload = true
	r.mu.Unlock()
	r.poke()
}

// Trigger is a writer's hint that table committed: it is reconciled within
// the debounce. It reports whether the table is one the reconciler manages
// (an unknown table is found, if it is managed, at the next listing).
func (r *Reconciler) Trigger(address string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tables[address]
	if !ok {
		return false
	}
	due := r.opts.Now().Add(r.opts.Debounce)
	if !r.running[address] && (e.index < 0 || e.status.NextDue.After(due)) {
		e.reason = ObserveTrigger
		r.schedule(e, due)
		r.poke()
	}
	return true
}

// Status is every table's state, by address.
func (r *Reconciler) Status() []TableStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]TableStatus, 0, len(r.tables))
	for _, e := range r.tables {
		st := e.status
		st.LastDone = maps.Clone(st.LastDone) // read after the lock is released
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b TableStatus) int { return cmp.Compare(a.Address, b.Address) })
	return out
}

// Ready is whether the first listing is done (readyz).
func (r *Reconciler) Ready() bool { return r.ready.Load() }

func (r *Reconciler) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run reconciles until ctx is cancelled (SIGTERM: no new reconcile starts,
// those running finish their commits as apply's first interrupt lets
// them), or, with Once, until every table has been reconciled once. It
// returns an error only when no configuration could be loaded at start.
func (r *Reconciler) Run(ctx context.Context) error {
	// The digest is read before the configuration, so that an edit in
	// between is a change the watch sees.
	var digest string
	watching := r.opts.Watch > 0 && r.opts.Sources != nil && !r.opts.Once
	if watching {
		// Unreadable now: "" is no digest, and watch says so at its
		// first tick if it still is.
		digest, _ = r.opts.Sources()
	}
	if err := r.loadConfig(); err != nil {
		return err
	}
	defer func() {
		r.mu.Lock()
		if r.sess != nil {
			_ = r.sess.Close()
		}
		r.mu.Unlock()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	if watching {
		// Stopped when Run returns, before wg.Wait (defers run last
		// first).
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.watch(wctx, digest)
		}()
	}
	slots := make(chan struct{}, r.parallelism())
	for {
		if ctx.Err() != nil {
			return nil
		}
		r.mu.Lock()
		reload, busy := r.reload, len(r.running) > 0
		r.mu.Unlock()
		if reload && busy {
			// The session is swapped when nothing runs on it: start no
			// new reconcile until then.
			if !r.sleep(ctx, time.Hour) {
				return nil
			}
			continue
		}
		if reload {
			if err := r.loadConfig(); err != nil {
				r.opts.Log.Error("configuration not reloaded; the one in force stays", "error", err)
				r.mu.Lock()
				r.reload = false
				r.mu.Unlock()
			}
			r.mu.Lock()
			r.lastListing = time.Time{}
			r.mu.Unlock()
		}
		if r.listingDue() {
			r.list(ctx)
		}
		if r.opts.Once && r.onceDone() {
			return nil
		}
		addr, wait := r.next()
		if addr == "" {
			if !r.sleep(ctx, wait) {
				return nil
			}
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			r.requeue(addr)
			return nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots; r.poke() }()
			r.reconcile(ctx, addr)
		}()
	}
}

// watch polls the configuration's files every Watch and reloads when
// their digest changes. Polling the content rather than watching for file
// events: a Kubernetes ConfigMap volume is updated by swapping a symbolic
// link to a new directory, which event watchers see as a removal they must
// re-arm after (fsnotify documents it), and network file systems send no
// events at all; a digest of a few small files every few seconds sees every
// one of these, and a touch or a rewrite with the same content is no change.
// A digest that cannot be read (the swap in progress) is tried again at the
// next tick; the change is seen once the files are back. A new digest is
// reloaded when the next tick reads it again, so a configuration is never
// loaded from files caught in the middle of a write. last is the
// digest read before the configuration in force was loaded ("" when it
// could not be read: the first digest read then reloads, in case).
func (r *Reconciler) watch(ctx context.Context, last string) {
	failing := false // said once, until the files are read again
	pending := ""    // a changed digest not yet seen twice
	tick := time.NewTicker(r.opts.Watch)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		d, err := r.opts.Sources()
		if err != nil {
			if !failing {
				r.opts.Log.Warn("configuration files cannot be read to watch them; trying again", "error", err)
			}
			failing = true
			continue
		}
		failing = false
		if d == last {
			pending = ""
			continue
		}
		if d != pending {
			// A change is loaded once it has held for a tick: a file
			// caught half written by an editor or a copy may parse
			// as a smaller, valid configuration.
			pending = d
			continue
		}
		r.opts.Log.Info("configuration files changed: reloading")
		r.Reload()
		last, pending = d, ""
	}
}

// sleep waits d, or until poked; false when ctx is done.
func (r *Reconciler) sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-r.wake:
	case <-timer.C:
	}
	return true
}

// listingDue: the catalogs were never listed, or not for an interval (with
// Once, only the first listing).
func (r *Reconciler) listingDue() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastListing.IsZero() {
		return true
	}
	return !r.opts.Once && r.opts.Now().Sub(r.lastListing) >= r.opts.Interval
}

func (r *Reconciler) parallelism() int {
	if r.opts.Parallelism > 0 {
		return r.opts.Parallelism
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg != nil && r.cfg.Settings.Parallelism > 0 {
		return r.cfg.Settings.Parallelism
	}
	return apply.DefaultParallelism
}

// loadConfig reads the configuration and, when it loads, opens a session
// on it (the previous one is closed: nothing runs on it now).
func (r *Reconciler) loadConfig() error {
	cfg, warnings, err := r.load()
	if err != nil {
		r.metrics.configLoads.WithLabelValues("failed").Inc()
		return err
	}
	sess := r.open(cfg)
	r.mu.Lock()
	old := r.sess
	r.cfg, r.warnings, r.sess, r.reload = cfg, warnings, sess, false
	r.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	r.metrics.configLoads.WithLabelValues("ok").Inc()
	r.opts.Log.Info("configuration loaded", "config_digest", cfg.Digest)
	return nil
}

// session is the configuration and session in force.
func (r *Reconciler) session() (*config.Config, hcl.Diagnostics, *providers.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg, r.warnings, r.sess
}

func (r *Reconciler) entry(addr string) *entry {
	e, ok := r.tables[addr]
	if !ok {
		e = &entry{status: TableStatus{Address: addr}, index: -1}
		r.tables[addr] = e
	}
	return e
}

// schedule (re)queues e at due. mu is held.
func (r *Reconciler) schedule(e *entry, due time.Time) {
	e.status.NextDue = due
	if e.index >= 0 {
		heap.Fix(&r.queue, e.index)
	} else {
		heap.Push(&r.queue, e)
	}
}

// jitter is a random wait in [0, Jitter*Interval). mu is held.
func (r *Reconciler) jitter() time.Duration {
	if r.opts.Jitter <= 0 {
		return 0
	}
	span := int64(float64(r.opts.Interval) * r.opts.Jitter)
	if span <= 0 {
		return 0
	}
	return time.Duration(r.opts.Rand.Int64N(span))
}

// retryAfter is the wait after a failure: a tenth of the interval, at
// least a second, at most five minutes.
func (r *Reconciler) retryAfter() time.Duration {
	return min(max(r.opts.Interval/10, time.Second), 5*time.Minute)
}

// next pops the table due first if it is due, else says how long to wait.
func (r *Reconciler) next() (string, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	wait := r.opts.Interval - now.Sub(r.lastListing) // the next listing
	if r.queue.Len() > 0 {
		e := r.queue[0]
		if d := e.status.NextDue.Sub(now); d > 0 {
			wait = min(wait, d)
		} else {
			heap.Pop(&r.queue)
			r.running[e.status.Address] = true
			r.updateGauges()
			return e.status.Address, 0
		}
	}
	if r.opts.Once {
		wait = min(wait, 100*time.Millisecond)
	}
	return "", max(wait, time.Millisecond)
}

// requeue puts back a table popped but not started.
func (r *Reconciler) requeue(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, addr)
	if e, ok := r.tables[addr]; ok {
		heap.Push(&r.queue, e)
	}
}

// onceDone: with Once, every table known has been reconciled once (a
// table in policy at the listing counts as reconciled, and so does one the
// listing could not plan, its catalog unreachable: retrying it until it
// answers made reconcile -once run forever, issue 43).
func (r *Reconciler) onceDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastListing.IsZero() || len(r.running) > 0 {
		return false
	}
	for _, e := range r.tables {
		if e.status.Runs == 0 && e.status.Result != ResultInPolicy && e.status.Result != ResultError {
			return false
		}
	}
	return true
}

func (r *Reconciler) planOptions(targets []string, warnings hcl.Diagnostics) apply.PlanOptions {
	return apply.PlanOptions{
		Targets: targets, Parallelism: r.opts.Parallelism, Now: r.opts.Now, Version: r.opts.Version,
		ConfigWarnings: warnings, NextDue: true,
	}
}

// reconcile is one table: plan it again (the table is the truth), apply
// what the plan says unless shadow, record, and schedule the next.
func (r *Reconciler) reconcile(ctx context.Context, addr string) {
	cfg, warnings, sess := r.session()
	log := r.opts.Log.With("table", addr)
	r.mu.Lock()
	if e, ok := r.tables[addr]; ok && e.reason != "" {
		// Queued by a listing that observed it already: not counted again.
		r.metrics.observed.WithLabelValues(e.reason).Inc()
		e.reason = ""
	}
	r.mu.Unlock()
	start := time.Now()
	p, err := apply.Plan(ctx, cfg, sess, r.planOptions([]string{addr}, warnings))
	r.metrics.planDuration.WithLabelValues("table").Observe(time.Since(start).Seconds())
	result, msg := "", ""
	var tp *diff.TablePlan
	switch {
	case err != nil:
		result, msg = ResultError, err.Error()
	case ctx.Err() != nil:
		result = ResultInterrupted
	case len(p.Errors) > 0:
		result, msg = ResultError, p.Errors[0].Message
	case len(p.Tables) == 0:
		// No longer managed (the configuration changed, or it was dropped):
		// the next listing forgets it.
		result = ResultSkipped
	default:
		tp = &p.Tables[0]
		switch {
		case len(tp.Actions) == 0:
			result = ResultInPolicy
		case r.opts.Shadow:
			result = ResultPlanned
			for _, a := range tp.Actions {
				r.metrics.actions.WithLabelValues(string(a.Type), "planned", "shadow").Inc()
			}
		default:
			result, msg = r.apply(ctx, cfg, sess, p, tp, log)
		}
	}
	if result == ResultError {
		r.metrics.planErrors.Inc()
		log.Error("table not planned", "error", msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, addr)
	e, ok := r.tables[addr]
	if !ok {
		return
	}
	e.status.Runs++
	e.status.LastRun = r.opts.Now()
	if tp != nil {
		r.record(e, *tp, result, msg)
	} else {
		e.status.Result, e.status.Error = result, msg
	}
	if r.opts.Once {
		r.updateGauges()
		return // reconciled once: not queued again
	}
	due, reason := r.opts.Now().Add(r.opts.Interval+r.jitter()), ObservePending
	switch result {
	case ResultError, ResultFailed:
		due, reason = r.opts.Now().Add(r.retryAfter()), ObserveRetry
	case ResultApplied:
		// Applied: planned again soon, to see it converged (an apply that
		// left something, a concurrent writer's new files, shows then).
		due, reason = r.opts.Now().Add(r.retryAfter()), ObserveChanged
	case ResultInPolicy:
		r.scheduleInPolicy(e, *tp)
		r.updateGauges()
		return
	}
	e.reason = reason
	r.schedule(e, due)
	r.updateGauges()
}

// apply runs the table's plan and counts what it did.
func (r *Reconciler) apply(ctx context.Context, cfg *config.Config, sess *providers.Session, p *diff.Plan, tp *diff.TablePlan, log *slog.Logger) (string, string) {
	held := r.limit(tp)
	if len(tp.Actions) == 0 {
		return ResultSkipped, strings.Join(held, "; ")
	}
	if len(held) > 0 {
		diff.Summarize(p) // apply checks the summary against the tables
	}
	result, msg := r.applyPlan(ctx, cfg, sess, p, tp, log)
	if len(held) > 0 {
		msg = strings.TrimPrefix(msg+"; "+strings.Join(held, "; "), "; ")
	}
	return result, msg
}

// limit takes out of the table's plan what the reconciler's own limits
// hold back (MinIntervals, BytesPerInterval, MaxDeletes), saying why, and reserves the
// compaction's input against the interval's budget (planned input counts,
// whatever the apply then rewrites: the budget is a bound). Apply runs only
// what its plan has, so an action taken out is not run.
func (r *Reconciler) limit(tp *diff.TablePlan) (held []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lastDone map[diff.ActionType]time.Time
	if e, ok := r.tables[tp.Address]; ok {
		lastDone = e.status.LastDone
	}
	now := r.opts.Now()
	kept := tp.Actions[:0:0]
	for _, a := range tp.Actions {
		least, last := r.opts.MinIntervals[a.Type], lastDone[a.Type]
		switch {
		case least > 0 && !last.IsZero() && now.Sub(last) < least:
			held = append(held, fmt.Sprintf("%s ran %s ago, waits for its minimum interval of %s", a.Type, now.Sub(last).Round(time.Second), least))
			r.metrics.actions.WithLabelValues(string(a.Type), "skipped", "min_interval").Inc()
			continue
		case a.Compact != nil && r.opts.BytesPerInterval > 0 && r.budgetUsed+a.Compact.InputBytes > r.opts.BytesPerInterval:
			held = append(held, fmt.Sprintf("compact of %d bytes waits for the next interval (-budget %d bytes per interval, %d used)", a.Compact.InputBytes, r.opts.BytesPerInterval, r.budgetUsed))
			r.metrics.actions.WithLabelValues(string(a.Type), "skipped", "budget").Inc()
			continue
		case a.Expire != nil && r.opts.MaxDeletes > 0 && a.Expire.FilesToDelete > r.opts.MaxDeletes,
			a.Orphans != nil && r.opts.MaxDeletes > 0 && int64(a.Orphans.Count) > r.opts.MaxDeletes:
			n := int64(0)
			if a.Expire != nil {
				n = a.Expire.FilesToDelete
			} else {
				n = int64(a.Orphans.Count)
			}
			held = append(held, fmt.Sprintf("%s would delete %d files, more than -max-deletes %d: held for review (icewright plan shows it; icewright apply runs it)", a.Type, n, r.opts.MaxDeletes))
			r.metrics.actions.WithLabelValues(string(a.Type), "skipped", "max_deletes").Inc()
			continue
		case a.Compact != nil:
			r.budgetUsed += a.Compact.InputBytes
		}
		kept = append(kept, a)
	}
	tp.Actions = kept
	return held
}

func (r *Reconciler) applyPlan(ctx context.Context, cfg *config.Config, sess *providers.Session, p *diff.Plan, tp *diff.TablePlan, log *slog.Logger) (string, string) {
	opts := r.opts.Apply
	opts.Now, opts.Version = r.opts.Now, r.opts.Version
	opts.RunID = cmp.Or(opts.RunID, "reconcile")
	// Other tables are planned and applied beside this one: CPU actuals
	// are shares of the process's time, approximate.
	opts.CPUShared = true
	res, err := apply.Apply(ctx, cfg, sess, p, opts)
	if err != nil {
		r.metrics.actions.WithLabelValues("table", "failed", "apply_error").Inc()
		return ResultFailed, err.Error()
	}
	if len(res.Tables) == 0 {
		return ResultSkipped, ""
	}
	tr := res.Tables[0]
	r.mu.Lock()
	if e, ok := r.tables[tp.Address]; ok {
		for _, a := range tr.Actions {
			if a.Status == "done" {
				if e.status.LastDone == nil {
					e.status.LastDone = map[diff.ActionType]time.Time{}
				}
				e.status.LastDone[a.Type] = r.opts.Now()
			}
		}
	}
	r.mu.Unlock()
	for _, a := range tr.Actions {
		reason := ""
		if a.Status == "skipped" {
			reason = "nothing_left"
			if tr.Locked {
				reason = "locked"
			}
		}
		r.metrics.actions.WithLabelValues(string(a.Type), a.Status, reason).Inc()
		r.metrics.applyDuration.WithLabelValues(string(a.Type)).Observe(float64(a.DurationMs) / 1000)
		if a.Status != "done" {
			continue
		}
		if a.Type == diff.Compact {
			r.metrics.bytesRewritten.Add(float64(max(a.BytesBefore, 0)))
		}
		r.metrics.filesDeleted.Add(float64(max(a.FilesDeleted, 0)))
		r.metrics.bytesFreed.Add(float64(max(a.BytesFreed, 0)))
		r.metrics.freed(tp.Address, a.BytesFreed)
		r.metrics.snapshotsExpired.Add(float64(max(a.SnapshotsExpired, 0)))
	}
	for _, rf := range tp.Refusals {
		r.metrics.actions.WithLabelValues(string(rf.Action), "refused", "refused").Inc()
	}
	log.Info("table reconciled", "status", tr.Status, "actions", len(tr.Actions), "locked", tr.Locked)
	switch {
	case tr.Locked:
		return ResultSkipped, "locked by another run: " + tr.Error
	case tr.Status == "failed":
		return ResultFailed, tr.Error
	case tr.Refused() != "":
		// Not in policy: the plan refused part of it (apply counts the
		// table changed when its other actions ran; reconcile reports
		// what is left, as before).
		return ResultFailed, tr.Refused()
	case tr.Status == "interrupted":
		return ResultInterrupted, tr.Error
	case tr.Status == "done":
		return ResultApplied, ""
	}
	return ResultSkipped, tr.Error
}

// record keeps what a plan of the table said. mu is held.
func (r *Reconciler) record(e *entry, tp diff.TablePlan, result, msg string) {
	e.status.Policy, e.status.PolicyDigest = tp.Policy, tp.PolicyDigest
	e.status.MetadataLocation = tp.Observed.MetadataLocation
	e.status.LastObserved = r.opts.Now()
	e.status.Result, e.status.Error = result, msg
	e.status.PendingActions = nil
	if result != ResultInPolicy && result != ResultApplied {
		e.status.PendingActions = actionNames(tp)
	}
	r.metrics.observe(tp, len(e.status.PendingActions), r.opts.Now())
}

func actionNames(tp diff.TablePlan) []string {
	var out []string
	for _, a := range tp.Actions {
		out = append(out, string(a.Type))
	}
	return out
}

// updateGauges sets the table and queue gauges. mu is held.
func (r *Reconciler) updateGauges() {
	counts := map[string]int{}
	due := 0
	now := r.opts.Now()
	for _, e := range r.tables {
		switch e.status.Result {
		case ResultInPolicy, ResultApplied:
			counts["in_policy"]++
		case ResultError:
			counts["error"]++
		default:
			counts["out_of_policy"]++
		}
		if e.index >= 0 && !e.status.NextDue.After(now) {
			due++
		}
	}
	for _, s := range []string{"in_policy", "out_of_policy", "error"} {
		r.metrics.tables.WithLabelValues(s).Set(float64(counts[s]))
	}
	r.metrics.queueDepth.Set(float64(due))
	r.metrics.running.Set(float64(len(r.running)))
}

// dueQueue is a min-heap of entries by NextDue.
type dueQueue []*entry

func (q dueQueue) Len() int { return len(q) }
func (q dueQueue) Less(i, j int) bool {
	return q[i].status.NextDue.Before(q[j].status.NextDue)
}
func (q dueQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *dueQueue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*q = old[:len(old)-1]
	return e
}
