package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/diff/planfile"
	"github.com/icewright/icewright/providers"
)

// ErrStalePlan is returned, before anything changed, when a saved plan no
// longer fits: the configuration changed, or a table was dropped and
// recreated (its UUID differs).
var ErrStalePlan = errors.New("saved plan is stale")

// DefaultMaxRetries bounds re-plans of one table after commit conflicts.
const DefaultMaxRetries = 4

// ApplyOptions are the inputs of Apply besides the plan.
type ApplyOptions struct {
	Parallelism int // tables at once; 0 = config's, else DefaultParallelism
	Now         func() time.Time
	Saved       bool // the plan came from a file (apply PLANFILE)
	Progress    func(Event)
	MaxRetries  int // re-plans after conflicts per table; 0 = DefaultMaxRetries, <0 = none
	Version     string
	// Backoff is the wait before the n-th retry (n from 1); nil doubles from
	// 100ms. Tests shorten it.
	Backoff func(n int) time.Duration
	// SetMemoryLimit is runtime/debug.SetMemoryLimit, or nil to leave the
	// Go soft memory limit alone (a user's GOMEMLIMIT). With it, while
	// compactions run the limit is what they need together
	// (providers.MemoryLimiter; never above the limit in force before),
	// and the previous limit is restored after the last one.
	SetMemoryLimit func(int64) int64
	// Abort is cancelled to stop at once (a second Ctrl-C). Cancelling the
	// ctx of Apply (the first) starts no new table or action and lets an
	// expiry whose commit has landed finish its deletions, within
	// FinishWithin (0: the executor's default, ten minutes); Abort stops those
	// too, and the results count what was left.
	Abort        context.Context
	FinishWithin time.Duration

	// Lock takes a lease on each table with actions before its first
	// action and releases it after the last (docs/design.md §5.4, Locking).
	Lock bool
	// LockTimeout is how long to wait for a lease another run holds; after
	// it the table is skipped, naming the holder (0: do not wait).
	LockTimeout time.Duration
	// LockOwner names this run's leases for people ("user@host"); RunID
	// identifies the run (a lease of the same run is its own).
	LockOwner string
	RunID     string
	// LeaseTTL is how long a lease lasts unrenewed; 0 = DefaultLeaseTTL.
	LeaseTTL time.Duration
	// LockSkipOK makes a table locked past LockTimeout a skip with a
	// warning instead of a failure (the reconciler's mode).
	LockSkipOK bool
	// CPUShared: the process does other work while this apply runs (the
	// reconciler plans and applies other tables), so no action's CPU
	// time is exact: every actual is marked approximate (actuals.go).
	CPUShared bool
}

// Apply executes an approved plan (docs/design.md §5.3, §5.4). It returns an error
// only for refusals before anything changed (a stale saved plan); every
// table's outcome, failures included, is in Results.
func Apply(ctx context.Context, cfg *config.Config, sess *providers.Session, plan *diff.Plan, opts ApplyOptions) (*Results, error) {
	return run(sess.WithStorageLimits(ctx), cfg, sess, plan, opts)
}

type runner struct {
	cfg     *config.Config
	b       backend
	opts    ApplyOptions
	now     func() time.Time
	retries int
	memory  *providers.MemoryLimiter // nil: the memory limit is left alone
	// cpu apportions CPU time among running actions; oneTableAtATime
	// makes an action's share exact (actuals.go).
	cpu             *cpuClock
	oneTableAtATime bool
}

func run(ctx context.Context, cfg *config.Config, b backend, plan *diff.Plan, opts ApplyOptions) (*Results, error) {
	if cfg == nil || plan == nil {
		return nil, errors.New("apply: configuration and plan are required")
	}
	if err := planfile.Validate(plan); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	if err := checkPolicies(cfg, plan); err != nil {
		return nil, err
	}
	r := newRunner(cfg, b, opts)
	res := &Results{
		FormatVersion:    ResultsFormatVersion,
		IcewrightVersion: opts.Version,
		StartedAt:        r.now().UTC(),
		SavedPlan:        opts.Saved,
		RunID:            opts.RunID,
		Tables:           []TableResult{},
	}
	loaded, loadErr, err := loadTables(ctx, b, plan)
	if err != nil {
		return nil, err
	}
	// Other tables' references are read once per run, by whichever
	// deletion asks first: counted apart from that action.
	ctx, refs := providers.WithRunMeter(ctx)
	out := r.applyTables(ctx, plan, loaded, loadErr, res)
	res.OtherTablesReferences = otherTablesCost(plan, refs)
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	// Tables the plan could not plan are failures of this apply too (exit 1),
	// listed with the plan's message.
	for _, pe := range plan.Errors {
		tr := TableResult{Address: pe.Address, Actions: []ActionResult{}}
		tr.stop(StatusFailed, &Failure{Stage: StageNotPlanned, Err: errors.New(pe.Message)})
		out = append(out, tr)
	}
	slices.SortStableFunc(out, func(a, b TableResult) int { return strings.Compare(a.Address, b.Address) })
	res.Tables = out
	res.FinishedAt = r.now().UTC()
	res.summarize()
	return res, nil
}

func newRunner(cfg *config.Config, b backend, opts ApplyOptions) *runner {
	r := &runner{cfg: cfg, b: b, opts: opts, now: clock(opts.Now), retries: opts.MaxRetries, cpu: processClock}
	if r.retries == 0 {
		r.retries = DefaultMaxRetries
	}
	if r.retries < 0 {
		r.retries = 0
	}
	if opts.SetMemoryLimit != nil {
		r.memory = providers.NewMemoryLimiter(opts.SetMemoryLimit)
	}
	return r
}

// loadTables checks identity first, for every table with work, before
// anything changes: a dropped-and-recreated table makes the whole saved
// plan stale (the error). A table that cannot be loaded is in loadErr.
func loadTables(ctx context.Context, b backend, plan *diff.Plan) (loaded map[string]*providers.Table, loadErr map[string]error, err error) {
	loaded, loadErr = map[string]*providers.Table{}, map[string]error{}
	for _, tp := range plan.Tables {
		if len(tp.Actions) == 0 {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		tbl, err := b.Table(ctx, tp.Address)
		if err != nil {
			loadErr[tp.Address] = err
			continue
		}
		if got := tbl.UUID(); got != tp.Observed.TableUUID {
			return nil, nil, fmt.Errorf("%w: table %s was recreated since the plan (UUID %s, plan has %s); nothing was changed",
				ErrStalePlan, tp.Address, got, tp.Observed.TableUUID)
		}
		loaded[tp.Address] = tbl
	}
	return loaded, loadErr, nil
}

// applyTables applies the plan's tables, at most the parallelism at once,
// and returns their results in the plan's order.
func (r *runner) applyTables(ctx context.Context, plan *diff.Plan, loaded map[string]*providers.Table, loadErr map[string]error, res *Results) []TableResult {
	withActions := 0
	for _, tp := range plan.Tables {
		if len(tp.Actions) > 0 {
			withActions++
		}
	}
	out := make([]TableResult, len(plan.Tables))
	par := parallelism(r.opts.Parallelism, r.cfg)
	r.oneTableAtATime = par == 1 || withActions <= 1
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, par)
	)
	for i, tp := range plan.Tables {
		if len(tp.Actions) == 0 {
			out[i] = inPolicyTable(tp)
			continue
		}
		if err := loadErr[tp.Address]; err != nil {
			out[i] = failedTable(tp, &Failure{Stage: StageLoad, Err: err})
			continue
		}
		// Ctrl-C stops starting tables; running ones finish their current
		// action cleanly.
		select {
		case <-ctx.Done():
		case sem <- struct{}{}:
		}
		if ctx.Err() != nil {
			out[i] = interruptedTable(tp, ctx.Err())
			res.Interrupted = true
			continue
		}
		wg.Add(1)
		go func(i int, tp diff.TablePlan) {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = r.applyTable(ctx, tp, loaded[tp.Address])
			var err error
			if out[i].Status == StatusFailed {
				err = errors.New(out[i].Error)
			}
			emit(r.opts.Progress, Event{Table: tp.Address, Phase: PhaseFinished, Total: int64(withActions), Unit: "tables", Err: err})
		}(i, tp)
	}
	wg.Wait()
	return out
}

// inPolicyTable is a table the plan had nothing to do on: in policy, or
// failed when the plan refused what it would have done.
func inPolicyTable(tp diff.TablePlan) TableResult {
	tr := TableResult{Address: tp.Address, Status: StatusInPolicy, Actions: []ActionResult{},
		MetadataBefore: tp.Observed.MetadataLocation, PlannedRefusals: tp.Refusals}
	if len(tp.Refusals) > 0 {
		tr.stop(StatusFailed, &Failure{Stage: StageRefused, Err: errors.New(refusalText(tp.Refusals))})
	}
	return tr
}

// checkPolicies is the saved plan's configuration check (docs/design.md §5.3): the
// plan is stale when a table it would change now gets another effective
// policy, or none. Only values count (config.Effective.PolicyDigest): a
// comment, a reformatted file or another table's policy leave the plan
// valid. Tables in policy at plan time have nothing to apply, so a change
// of their policy does not matter to this plan.
func checkPolicies(cfg *config.Config, plan *diff.Plan) error {
	for _, tp := range plan.Tables {
		if len(tp.Actions) == 0 {
			continue
		}
		if tp.PolicyDigest == "" {
			return fmt.Errorf("%w: the plan has no policy digest for %s (made by an icewright before plan format 1.1); run icewright plan again",
				ErrStalePlan, tp.Address)
		}
		pol, ok := cfg.Resolve(tp.Address)
		if !ok {
			return fmt.Errorf("%w: the configuration no longer manages %s; run icewright plan again", ErrStalePlan, tp.Address)
		}
		if got := pol.PolicyDigest(); got != tp.PolicyDigest {
			return fmt.Errorf("%w: the effective policy of %s changed since the plan was made (%s, now %s); run icewright plan again (icewright explain %s shows the policy now)",
				ErrStalePlan, tp.Address, short(tp.PolicyDigest), short(got), tp.Address)
		}
	}
	return nil
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19] + "…"
	}
	return d
}

func refusalText(rs []diff.Refusal) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.Action+": "+r.Reason)
	}
	return strings.Join(parts, "; ")
}

func failedTable(tp diff.TablePlan, f *Failure) TableResult {
	tr := TableResult{Address: tp.Address, MetadataBefore: tp.Observed.MetadataLocation, PlannedRefusals: tp.Refusals}
	tr.stop(StatusFailed, f)
	for _, a := range tp.Actions {
		tr.Actions = append(tr.Actions, ActionResult{Type: a.Type, Destructive: a.Destructive, Status: StatusSkipped, Reason: "table failed: " + tr.Error})
	}
	return tr
}

// lockedTable is a table another run holds the lease of: skipped, with
// the holder and the lease's expiry. It fails the apply (exit 1) unless
// LockSkipOK: a CD job whose tables were all skipped must not read green,
// while a reconciler, which comes back later, may say so.
func (r *runner) lockedTable(tp diff.TablePlan, locked *providers.LockedError) TableResult {
	why := &Failure{Stage: StageLease, Err: fmt.Errorf("%w; another apply is working on this table (wait for it with -lock-timeout; if that run is dead, its lease lapses by itself, or run icewright force-unlock %s %s)",
		locked, locked.Holder.RunID, tp.Address)}
	tr := TableResult{Address: tp.Address, Locked: true,
		MetadataBefore: tp.Observed.MetadataLocation, PlannedRefusals: tp.Refusals}
	tr.stop(StatusFailed, why)
	if r.opts.LockSkipOK && len(tp.Refusals) == 0 {
		tr.Status = StatusSkipped
		tr.Warnings = append(tr.Warnings, "skipped: "+tr.Error)
	}
	for _, a := range tp.Actions {
		tr.Actions = append(tr.Actions, ActionResult{Type: a.Type, Destructive: a.Destructive, Status: StatusSkipped, Reason: "table locked by another apply"})
	}
	return tr
}

func interruptedTable(tp diff.TablePlan, err error) TableResult {
	tr := TableResult{Address: tp.Address, MetadataBefore: tp.Observed.MetadataLocation}
	tr.stop(StatusInterrupted, &Failure{Stage: StageQueued, Err: err, Interrupted: true})
	for _, a := range tp.Actions {
		tr.Actions = append(tr.Actions, ActionResult{Type: a.Type, Destructive: a.Destructive, Status: StatusSkipped, Reason: "interrupted before start"})
	}
	return tr
}

// step is one action to run now, with notes about what the intersection
// with the approved plan left out.
type step struct {
	action     diff.Action
	notApplied []string
	skip       string // non-empty: do not run, report skipped with this reason
	refused    bool   // the skip is a safety refusal: report it as failed
}

// tableRun is one table's apply in progress.
type tableRun struct {
	r    *runner
	tp   diff.TablePlan
	pol  *config.Effective
	tbl  *providers.Table // the table as last loaded or committed
	lock *tableLock       // nil: no lease
	// seen is the table before any action of this apply, and the
	// snapshots its actions commit: expiry keeps what was live then unless
	// this apply's own commits replaced it (docs/design.md §5.4).
	seen      *applied
	results   map[diff.ActionType]*ActionResult
	conflicts int
	tr        *TableResult
}

// applyTable runs one table's actions in order. A table unchanged since the
// plan runs exactly the approved actions; a changed table is re-observed and
// re-planned, and the fresh plan is bounded by the approved one (see bound).
//
// Every action runs on the table as the catalog holds it at that moment and
// commits asserting it has not moved since. Non-destructive actions recompute
// their work from that version; expiry re-checks that each listed snapshot
// still qualifies on it; orphan removal re-checks each listed path. A commit
// that conflicts with a concurrent writer is retried the same way (reload,
// recompute, commit), a bounded number of times with backoff.
func (r *runner) applyTable(ctx context.Context, tp diff.TablePlan, tbl *providers.Table) (tr TableResult) {
	start := time.Now()
	// One breaker for the table's work, its lease included: once its store
	// stops answering, the rest of it fails at once (issue 32, item 5).
	ctx = providers.WithStorageBreaker(ctx)
	tr = TableResult{Address: tp.Address, MetadataBefore: tp.Observed.MetadataLocation, PlannedRefusals: tp.Refusals}

	pol, ok := r.cfg.Resolve(tp.Address)
	if !ok {
		return failedTable(tp, &Failure{Stage: StageConfig})
	}
	t := &tableRun{r: r, tp: tp, pol: pol, tbl: tbl, results: map[diff.ActionType]*ActionResult{}, tr: &tr}
	tr.Attempts = 1

	// What is left to do is decided before any lease (issue 26): a saved
	// plan already applied, stale or refused leaves the table untouched,
	// and so does a table with nothing left to do.
	steps, fail := r.plannedSteps(ctx, pol, tp, t.tbl, &tr)
	if r.opts.Lock && fail == nil && anyRunnable(steps) {
		l, err := r.lockTable(ctx, pol, t.tbl)
		var locked *providers.LockedError
		if errors.As(err, &locked) {
			// Another apply is working on this table: it does the work.
			return r.lockedTable(tp, locked)
		}
		if err != nil {
			return failedTable(tp, &Failure{Stage: StageLease, Err: err})
		}
		t.lock = l
		defer func() {
			if err := t.lock.release(ctx); err != nil {
				tr.Warnings = append(tr.Warnings, "release lock: "+err.Error())
			}
		}()
		steps, fail = t.decideAgain(ctx, steps)
	}

	t.seen = &applied{began: t.tbl}
	if fail == nil {
		fail = t.runSteps(ctx, steps)
	}
	t.finish(fail)
	tr.DurationMs = time.Since(start).Milliseconds()
	// A refusal in the plan (a partition an engine cannot be bounded to,
	// a sweep a safety rule stopped) is not a failure of what ran: the
	// table keeps its actions' status (done: counted changed), its
	// refusals listed (planned_refusals) and counted (tables_refused). The
	// apply still exits 1 (Results.Failed), as the plan did: part of the
	// declared state was not reached, and someone must look at why.
	return tr
}

// decideAgain: while this run waited for the lease, the holder may have
// done the work, so what runs is decided again on the table as it is now.
func (t *tableRun) decideAgain(ctx context.Context, steps []step) ([]step, *Failure) {
	cur, err := t.r.b.Table(ctx, t.tp.Address)
	if err != nil {
		return steps, &Failure{Stage: StageLoad, Err: err}
	}
	if cur.MetadataLocation() == t.tbl.MetadataLocation() {
		return steps, nil
	}
	t.tbl = cur
	return t.r.plannedSteps(ctx, t.pol, t.tp, t.tbl, t.tr)
}

// record keeps an action's result; a retried action keeps its earlier
// notes.
func (t *tableRun) record(ar ActionResult) {
	if old, ok := t.results[ar.Type]; ok {
		ar.NotApplied = append(slices.Clone(old.NotApplied), ar.NotApplied...)
		ar.StagedFilesRemoved += old.StagedFilesRemoved
		ar.Actual, ar.ActualCPUApproximate = addActual(old, &ar)
	}
	t.results[ar.Type] = &ar
}

// runSteps runs the steps in order, adjacent kinds that share a commit
// (properties and the sort order) as one batch, until one fails.
func (t *tableRun) runSteps(ctx context.Context, steps []step) *Failure {
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		if s.skip != "" {
			t.skipStep(s)
			continue
		}
		batch := []step{s}
		for b := s.action.Type.Batch(); b != "" && i+1 < len(steps) &&
			steps[i+1].action.Type.Batch() == b && steps[i+1].skip == ""; i++ {
			batch = append(batch, steps[i+1])
		}
		if f := t.runBatch(ctx, batch); f != nil {
			return f
		}
	}
	return nil
}

// skipStep reports a step that does not run: skipped, or failed when the
// skip is a safety refusal.
func (t *tableRun) skipStep(s step) {
	ar := ActionResult{Type: s.action.Type, Destructive: s.action.Destructive, Status: StatusSkipped, Reason: s.skip, NotApplied: s.notApplied}
	phase := PhaseSkipped
	if s.refused {
		ar.Status, ar.Reason, ar.Error = StatusFailed, "", s.skip
		phase = PhaseFailed
	}
	t.record(ar)
	emit(t.r.opts.Progress, Event{Table: t.tp.Address, Action: string(s.action.Type), Phase: phase, Err: errors.New(s.skip)})
}

// runBatch runs one batch on the table as the catalog holds it now,
// retrying after a commit conflict up to the runner's retries.
func (t *tableRun) runBatch(ctx context.Context, batch []step) *Failure {
	kind := batch[0].action.Type
	for {
		if err := ctx.Err(); err != nil {
			return &Failure{Action: kind, Stage: StageStart, Err: err, Interrupted: true, Retries: t.conflicts}
		}
		cur, f := t.reload(ctx, kind)
		if f != nil {
			return f
		}
		t.tbl = cur
		ars, next, err := t.r.runStep(ctx, cur, t.pol, batch, t.seen)
		if errors.Is(err, providers.ErrConflict) && t.conflicts < t.r.retries {
			if f := t.retryAfter(ctx, kind, ars, err); f != nil {
				return f
			}
			continue
		}
		for _, ar := range ars {
			t.record(ar)
		}
		if next != nil {
			t.tbl = next
		}
		if err != nil {
			return &Failure{Action: kind, Stage: StageExecute, Err: err, Interrupted: errors.Is(err, errActionInterrupted), Retries: t.conflicts}
		}
		return nil
	}
}

// reload loads the table before an action and checks that it is still the
// planned table and that the lease still holds.
func (t *tableRun) reload(ctx context.Context, kind diff.ActionType) (*providers.Table, *Failure) {
	cur, err := t.r.b.Table(ctx, t.tp.Address)
	if err != nil {
		return nil, &Failure{Action: kind, Stage: StageLoad, Err: err, Retries: t.conflicts}
	}
	if cur.UUID() != t.tp.Observed.TableUUID {
		return nil, &Failure{Action: kind, Stage: StageIdentity, Retries: t.conflicts}
	}
	if t.lock != nil {
		if err := t.lock.lost(); err != nil {
			return nil, &Failure{Action: kind, Stage: StageLease, Err: err, Retries: t.conflicts}
		}
	}
	return cur, nil
}

// retryAfter counts a commit conflict, keeps the count of the files the
// failed commit staged and apply removed, and waits before the retry.
func (t *tableRun) retryAfter(ctx context.Context, kind diff.ActionType, ars []ActionResult, err error) *Failure {
	t.conflicts++
	t.tr.Attempts++
	t.tr.AttemptConflicts = append(t.tr.AttemptConflicts, fmt.Sprintf("%s: %v", kind, err))
	for _, ar := range ars {
		// The failed attempt's work is part of the action's actual.
		if ar.StagedFilesRemoved > 0 || ar.Actual != nil {
			if old, ok := t.results[ar.Type]; ok {
				old.StagedFilesRemoved += ar.StagedFilesRemoved
				old.Actual, old.ActualCPUApproximate = addActual(old, &ar)
			} else {
				t.record(ActionResult{Type: ar.Type, Destructive: ar.Destructive, StagedFilesRemoved: ar.StagedFilesRemoved,
					Actual: ar.Actual, ActualCPUApproximate: ar.ActualCPUApproximate})
			}
		}
	}
	emit(t.r.opts.Progress, Event{Table: t.tp.Address, Action: string(kind), Phase: PhaseRetry, Done: int64(t.conflicts), Total: int64(t.r.retries), Err: err})
	if werr := sleepCtx(ctx, t.r.backoff(t.conflicts)); werr != nil {
		return &Failure{Action: kind, Stage: StageRetryWait, Err: werr, Interrupted: true, Retries: t.conflicts}
	}
	return nil
}

// finish writes the table's result: every approved (and every reported)
// action gets a line, in plan order, and the table its status.
func (t *tableRun) finish(fail *Failure) {
	tr := t.tr
	for _, a := range t.tp.Actions {
		if old, ok := t.results[a.Type]; !ok || old.Status == "" {
			why := "not run"
			if fail != nil {
				why = "not run: " + fail.Error()
			}
			ar := ActionResult{Type: a.Type, Destructive: a.Destructive, Status: StatusSkipped, Reason: why}
			if ok {
				ar.StagedFilesRemoved = old.StagedFilesRemoved
				ar.Actual, ar.ActualCPUApproximate = old.Actual, old.ActualCPUApproximate
			}
			t.results[a.Type] = &ar
		}
	}
	var order []diff.ActionType
	for typ, ar := range t.results {
		order = append(order, typ)
		ar.Estimate = approvedEstimate(t.tp.Actions, typ)
	}
	slices.SortFunc(order, func(a, b diff.ActionType) int { return a.Order() - b.Order() })
	for _, typ := range order {
		tr.Actions = append(tr.Actions, *t.results[typ])
	}
	tr.MetadataAfter = t.tbl.MetadataLocation()
	switch {
	case fail != nil && fail.Interrupted && !anyStatus(tr.Actions, StatusFailed):
		tr.stop(StatusInterrupted, fail)
	case fail != nil:
		tr.stop(StatusFailed, fail)
	case anyStatus(tr.Actions, StatusFailed):
		tr.Status = StatusFailed
	case anyStatus(tr.Actions, StatusInterrupted):
		tr.Status = StatusInterrupted
	case anyStatus(tr.Actions, StatusDone):
		tr.Status = StatusDone
	default:
		tr.Status = StatusSkipped
	}
}

// plannedSteps is what runs on tbl: the approved actions when the table is
// still the version the plan was made against, else a fresh plan bounded
// by the approved one (docs/design.md §5.3).
func (r *runner) plannedSteps(ctx context.Context, pol *config.Effective, tp diff.TablePlan, tbl *providers.Table, tr *TableResult) ([]step, *Failure) {
	if tbl.MetadataLocation() == tp.Observed.MetadataLocation {
		steps := make([]step, 0, len(tp.Actions))
		for _, a := range tp.Actions {
			steps = append(steps, step{action: a})
		}
		return steps, nil
	}
	tr.Replanned = true
	fresh, err := r.replan(ctx, pol, tp.Address)
	if err != nil {
		return nil, &Failure{Stage: StageReplan, Err: err}
	}
	return bound(tp.Actions, *fresh, map[diff.ActionType]bool{}), nil
}

// anyRunnable: some step will run (not only skips to report).
func anyRunnable(steps []step) bool {
	for _, s := range steps {
		if s.skip == "" {
			return true
		}
	}
	return false
}

func anyStatus(as []ActionResult, st string) bool {
	for _, a := range as {
		if a.Status == st {
			return true
		}
	}
	return false
}

func (r *runner) backoff(n int) time.Duration {
	if r.opts.Backoff != nil {
		return r.opts.Backoff(n)
	}
	return time.Duration(100<<min(n-1, 6)) * time.Millisecond
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// replan observes the table again and diffs it at the current time. The
// result only bounds what runs (bound); each action then reloads the table
// and recomputes or re-checks on the exact version it commits against.
func (r *runner) replan(ctx context.Context, pol *config.Effective, addr string) (*diff.TablePlan, error) {
	st, err := r.b.Observe(ctx, pol)
	if err != nil {
		return nil, err // providers already says "observe <address>: ..."
	}
	if st.Address == "" {
		st.Address = addr
	}
	tp := diff.PlanTable(pol, st, r.now())
	return &tp, nil
}

// bound intersects a fresh plan with the approved one (docs/design.md §5.3):
// non-destructive actions are the fresh ones, but only of kinds the approved
// plan had; expire_snapshots keeps only approved ids (and refs) that still
// qualify; remove_orphan_files only approved paths that are still orphan
// candidates. A kind only the fresh plan has is skipped and reported.
func bound(approved []diff.Action, freshPlan diff.TablePlan, finished map[diff.ActionType]bool) []step {
	fresh := freshPlan.Actions
	freshBy := map[diff.ActionType]diff.Action{}
	for _, a := range fresh {
		freshBy[a.Type] = a
	}
	refused := map[diff.ActionType]string{}
	for _, r := range freshPlan.Refusals {
		refused[diff.ActionType(r.Action)] = r.Reason
	}
	apprBy := map[diff.ActionType]bool{}
	var out []step
	for _, a := range approved {
		apprBy[a.Type] = true
		if finished[a.Type] {
			continue
		}
		f, ok := freshBy[a.Type]
		if !ok {
			if why, isRefused := refused[a.Type]; isRefused {
				out = append(out, step{action: a, skip: "refused at apply time: " + why, refused: true})
				continue
			}
			out = append(out, step{action: a, skip: "no longer needed: the table changed since the plan and already satisfies this"})
			continue
		}
		b := diff.Bound(a, f)
		out = append(out, step{action: b.Action, notApplied: b.NotApplied, skip: b.Skip})
	}
	for _, f := range fresh {
		if !apprBy[f.Type] && !finished[f.Type] {
			out = append(out, step{action: f, skip: "not in the approved plan: the table changed since the plan; run icewright plan again"})
		}
	}
	slices.SortStableFunc(out, func(a, b step) int { return a.action.Type.Order() - b.action.Type.Order() })
	return out
}

// runStep executes one action (or adjacent actions sharing a commit) with
// its kind's executor and turns the result into ActionResults.
// applied is what one table's apply has seen and done so far: the table
// before its first action and the snapshots its executors committed.
type applied struct {
	began *providers.Table
	own   []int64
}

func (r *runner) runStep(ctx context.Context, tbl *providers.Table, pol *config.Effective, batch []step, seen *applied) ([]ActionResult, *providers.Table, error) {
	addr := pol.Address
	begin := time.Now()
	first := batch[0].action
	for _, s := range batch {
		emit(r.opts.Progress, Event{Table: addr, Action: string(s.action.Type), Phase: PhaseStart})
	}
	progress := func(done, total int64, unit string) {
		emit(r.opts.Progress, Event{Table: addr, Action: string(first.Type), Phase: PhaseProgress, Done: done, Total: total, Unit: unit})
	}
	actions := make([]diff.Action, len(batch))
	for i, s := range batch {
		a, err := s.action.WithSecrets(pol)
		if err != nil {
			return nil, tbl, fmt.Errorf("%w: %w", ErrStalePlan, err)
		}
		actions[i] = a
	}
	var (
		next   *providers.Table
		er     providers.ExecResult
		err    error
		actual *diff.Usage
		approx bool
	)
	if exec, ok := r.b.Executor(first.Type); ok {
		actx, done := r.actionContext(ctx)
		actx, count := r.startActual(actx, tbl)
		next, er, err = exec.Execute(actx, providers.ExecRequest{
			Table: tbl, Policy: pol, Actions: actions, Progress: progress, Now: r.now,
			Abort: r.opts.Abort, FinishWithin: r.opts.FinishWithin, Memory: r.memory,
			Began: seen.began, Committed: slices.Clone(seen.own),
		})
		actual, approx = count.done(r, freedBy(er))
		seen.own = append(seen.own, er.Snapshots...)
		if err != nil && actx.Err() != nil {
			err = fmt.Errorf("%w: %w", errActionInterrupted, context.Cause(actx))
		}
		done()
	} else {
		err = fmt.Errorf("unknown action %q", first.Type)
	}
	dur := time.Since(begin).Milliseconds()
	var out []ActionResult
	for i, s := range batch {
		ar := ActionResult{
			Type: s.action.Type, Destructive: s.action.Destructive, Status: StatusDone,
			Committed:   er.Committed,
			FilesBefore: er.FilesBefore, FilesAfter: er.FilesAfter,
			BytesBefore: er.BytesBefore, BytesAfter: er.BytesAfter,
			RowsBefore: er.RowsBefore, RowsAfter: er.RowsAfter,
			SnapshotsExpired: er.SnapshotsExpired, RefsRemoved: er.RefsRemoved,
			FilesDeleted: er.FilesDeleted, FilesQuarantined: er.FilesQuarantined, BytesFreed: er.BytesFreed,
			FilesNotMoved: er.FilesNotMoved, FilesInBothPlaces: er.FilesInBothPlaces,
			FilesPlaceUnknown: er.FilesPlaceUnknown, FilesMoved: er.Moved,
			DeleteErrors: er.DeleteErrors, FilesLeft: er.FilesLeft,
			StagedFilesRemoved: er.StagedRemoved, StagedFilesKept: er.StagedKept,
			NotApplied: append(slices.Clone(s.notApplied), er.Skipped...),
			Reason:     er.Note,
			Partitions: er.Partitions,
			DurationMs: dur,
		}
		if i == 0 {
			// A batch's work is counted once, on its first action.
			ar.Actual, ar.ActualCPUApproximate = actual, approx
		}
		phase := PhaseDone
		switch {
		case errors.Is(err, errActionInterrupted):
			ar.Status, ar.Error = StatusInterrupted, err.Error()
			ar.FilesAfter, ar.BytesAfter, ar.RowsAfter = ar.FilesBefore, ar.BytesBefore, ar.RowsBefore
			phase = PhaseFailed
		case err != nil:
			ar.Status, ar.Error = StatusFailed, err.Error()
			// Nothing landed (or nothing is known to have landed): the
			// table still has what it had.
			ar.FilesAfter, ar.BytesAfter, ar.RowsAfter = ar.FilesBefore, ar.BytesBefore, ar.RowsBefore
			phase = PhaseFailed
		case len(er.DeleteErrors) > 0:
			// A delete, move or manifest write that failed is a failure of
			// the action (issue 17): the apply did not do all it planned,
			// and the results name every file left (DeleteErrors).
			ar.Status, ar.Error = StatusFailed, incompleteError(er)
			phase = PhaseFailed
		case er.NoOp:
			ar.Status = StatusSkipped
			phase = PhaseSkipped
		}
		evErr := err
		if evErr == nil && ar.Status == StatusFailed {
			evErr = errors.New(ar.Error)
		}
		emit(r.opts.Progress, Event{Table: addr, Action: string(s.action.Type), Phase: phase, Err: evErr})
		out = append(out, ar)
	}
	return out, next, err
}

// errActionInterrupted marks an action stopped by an interrupt.
var errActionInterrupted = errors.New("interrupted")

// defaultFinishAfterInterrupt bounds how long a running action may go on
// after the first interrupt (ApplyOptions.FinishWithin overrides it).
const defaultFinishAfterInterrupt = 10 * time.Minute

// actionContext is the context a started action runs in (docs/design.md
// §5.4, Ctrl-C): the first interrupt (ctx) does not stop it, so a
// compaction half way through finishes and commits instead of throwing
// its work away; from then on it has FinishWithin to finish, and Abort (the
// second interrupt) stops it at once. Values (the storage limits) are
// ctx's.
func (r *runner) actionContext(ctx context.Context) (context.Context, func()) {
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	within := r.opts.FinishWithin
	if within <= 0 {
		within = defaultFinishAfterInterrupt
	}
	var (
		mu    sync.Mutex
		timer *time.Timer
	)
	stopFirst := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(within, func() {
			cancel(fmt.Errorf("it did not finish within %s of the interrupt", within))
		})
	})
	stopAbort := func() bool { return true }
	if r.opts.Abort != nil {
		stopAbort = context.AfterFunc(r.opts.Abort, func() { cancel(errors.New("stopped at once (second interrupt)")) })
	}
	return actx, func() {
		stopFirst()
		stopAbort()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel(nil)
	}
}

// incompleteError says what an action that ran but failed on some files
// left, in counts; the files themselves are in DeleteErrors.
func incompleteError(er providers.ExecResult) string {
	n := int64(len(er.DeleteErrors))
	var parts []string
	if er.FilesNotMoved > 0 || er.FilesInBothPlaces > 0 || er.FilesQuarantined > 0 {
		parts = append(parts, filesCount(er.FilesQuarantined)+" quarantined")
		if er.FilesNotMoved > 0 {
			parts = append(parts, fmt.Sprintf("%d not moved (still in place)", er.FilesNotMoved))
		}
		if er.FilesInBothPlaces > 0 {
			parts = append(parts, fmt.Sprintf("%d in both places (copied into the quarantine, original not removed)", er.FilesInBothPlaces))
		}
		if er.FilesPlaceUnknown > 0 {
			parts = append(parts, fmt.Sprintf("%d in a place unknown (a request got no answer)", er.FilesPlaceUnknown))
		}
		if rest := n - er.FilesNotMoved - er.FilesInBothPlaces - er.FilesPlaceUnknown; rest > 0 {
			parts = append(parts, fmt.Sprintf("%d other failures", rest))
		}
	} else {
		parts = append(parts, filesCount(er.FilesDeleted)+" deleted", fmt.Sprintf("%d failed", n))
		if er.FilesPlaceUnknown > 0 {
			parts = append(parts, fmt.Sprintf("%d of them in a place unknown (the delete got no answer)", er.FilesPlaceUnknown))
		}
	}
	if len(er.Moved) > 0 {
		return "incomplete: " + strings.Join(parts, ", ") + "; see files_moved and delete_errors for each file"
	}
	return "incomplete: " + strings.Join(parts, ", ") + "; see delete_errors for each file"
}

// filesCount is "1 file" or "3 files".
func filesCount(n int64) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
