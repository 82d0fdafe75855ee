package reconcile

import (
	"container/heap"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// list learns every managed table's metadata location (one query for a SQL
// catalog, each table's load answer for REST, a load of each table's
// metadata file elsewhere: providers.Session.MetadataLocations) and plans, in one plan, only the
// tables that need it: new ones, changed ones (a metadata location that is
// not byte-equal to the last observed), those whose policy changed,
// table blocks whose table the catalog does not list (the plan says so),
// and every table of a catalog that could not be listed (the plan says its
// error, as before, and plans what it lists by then). The others are
// skipped: a table in policy is observed again when diff.NextDue says one
// of its time-based rules can come due, or when it changes or a writer
// triggers it; a table queued for another reason keeps its turn. Tables
// out of policy are due now; tables no longer listed are forgotten
// (those of a catalog that could not be listed are kept).
func (r *Reconciler) list(ctx context.Context) {
	cfg, warnings, sess := r.session()
	locs, listed, targets := r.learnLocations(ctx, cfg, sess)
	if ctx.Err() != nil {
		return // cut short: nothing learnt
	}
	reasons := r.chooseObserved(cfg, locs, listed)
	targets = append(targets, slices.Sorted(maps.Keys(reasons))...)

	var (
		p   *diff.Plan
		err error
	)
	if len(targets) > 0 {
		start := time.Now()
		p, err = apply.Plan(ctx, cfg, sess, r.planOptions(targets, warnings))
		r.metrics.planDuration.WithLabelValues("listing").Observe(time.Since(start).Seconds())
	} else {
		p = &diff.Plan{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastListing = r.opts.Now()
	r.budgetUsed = 0 // a new interval
	if err != nil {
		r.metrics.planErrors.Inc()
		r.opts.Log.Error("listing the tables failed", "error", err)
		return
	}
	if ctx.Err() != nil {
		return // cut short: nothing learnt
	}
	r.listedDigest = cfg.Digest
	r.recordListing(p, reasons)
	r.forgetUnlisted(locs, listed, reasons)
	r.updateGauges()
	r.ready.Store(true)
}

// learnLocations reads the metadata location of every managed table of
// every catalog (Session.MetadataLocations): locs by address, the catalogs
// that answered, and, for each that did not, a target that plans all of
// it again (nothing of it is skipped blindly: the plan says its error for
// each of its blocks).
func (r *Reconciler) learnLocations(ctx context.Context, cfg *config.Config, sess *providers.Session) (locs map[string]string, listed map[string]bool, targets []string) {
	start := time.Now()
	locs, listed = map[string]string{}, map[string]bool{}
	for _, c := range cfg.Catalogs {
		m, err := sess.MetadataLocations(ctx, c.Name)
		if err != nil {
			targets = append(targets, c.Name+".**")
			continue
		}
		listed[c.Name] = true
		for a, loc := range m {
			if _, ok := cfg.Resolve(a); ok {
				locs[a] = loc
			}
		}
	}
	r.metrics.planDuration.WithLabelValues("locations").Observe(time.Since(start).Seconds())
	return locs, listed, targets
}

// chooseObserved are the tables to observe now, each with why: new, its
// metadata location changed, its policy changed, or a table block whose
// table its catalog does not list (the plan says so, as the full listing
// did: a configuration mistake is an error, never a silent skip). The
// tables in policy left out are counted as skipped.
func (r *Reconciler) chooseObserved(cfg *config.Config, locs map[string]string, listed map[string]bool) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	policies := map[string]string{} // address → policy digest, when the configuration changed
	if cfg.Digest != r.listedDigest {
		for a := range locs {
			if e, ok := r.tables[a]; ok && e.status.PolicyDigest != "" {
				pol, _ := cfg.Resolve(a)
				policies[a] = pol.PolicyDigest()
			}
		}
	}
	reasons := map[string]string{}
	skipped := 0
	for a, loc := range locs {
		if r.running[a] {
			continue
		}
		e, known := r.tables[a]
		switch {
		case !known:
			reasons[a] = ObserveNew
		case loc == "" || loc != e.status.MetadataLocation:
			reasons[a] = ObserveChanged
		case policies[a] != "" && policies[a] != e.status.PolicyDigest:
			reasons[a] = ObservePolicy
		case e.status.Result == ResultInPolicy:
			skipped++
		}
	}
	for _, tb := range cfg.Tables {
		cat, _, _ := strings.Cut(tb.Address, ".")
		if _, ok := locs[tb.Address]; ok || !listed[cat] || r.running[tb.Address] {
			continue
		}
		reasons[tb.Address] = ObserveRetry
		if _, known := r.tables[tb.Address]; !known {
			reasons[tb.Address] = ObserveNew
		}
	}
	r.metrics.skipped.Add(float64(skipped))
	return reasons
}

// recordListing takes in the listing's plan: each table planned is
// recorded and scheduled (in policy: when a rule can come due; else now),
// each error retried. mu is held.
func (r *Reconciler) recordListing(p *diff.Plan, reasons map[string]string) {
	now := r.opts.Now()
	observed := func(addr string) {
		reason := reasons[addr]
		if reason == "" {
			reason = ObserveRetry // a table of a catalog that could not be listed
		}
		r.metrics.observed.WithLabelValues(reason).Inc()
	}
	for _, tp := range p.Tables {
		e := r.entry(tp.Address)
		if r.running[tp.Address] {
			continue
		}
		observed(tp.Address)
		if len(tp.Actions) == 0 {
			r.record(e, tp, ResultInPolicy, "")
			r.scheduleInPolicy(e, tp)
			continue
		}
		if e.status.Result == "" {
			e.status.Result = ResultNew
			e.status.PendingActions = actionNames(tp)
		}
		// Seen now: the reconcile plans it again before it applies.
		e.status.MetadataLocation, e.status.LastObserved = tp.Observed.MetadataLocation, now
		e.reason = ""
		r.schedule(e, now.Add(r.jitter()))
	}
	for _, te := range p.Errors {
		if strings.ContainsAny(te.Address, "*?[") {
			// A selector's error (its catalog unreachable): no one table.
			r.opts.Log.Error("listing", "selector", te.Address, "error", te.Message)
			continue
		}
		e := r.entry(te.Address)
		if r.running[te.Address] {
			continue
		}
		observed(te.Address)
		e.status.Result, e.status.Error = ResultError, te.Message
		e.reason = ObserveRetry
		r.schedule(e, now.Add(r.retryAfter()))
	}
}

// forgetUnlisted forgets the tables no longer listed (a table block's
// missing table stays, with its error); a catalog that could not be
// listed forgets none of its tables. mu is held.
func (r *Reconciler) forgetUnlisted(locs map[string]string, listed map[string]bool, reasons map[string]string) {
	for a, e := range r.tables {
		cat, _, _ := strings.Cut(a, ".")
		if _, ok := locs[a]; ok || reasons[a] != "" || !listed[cat] || r.running[a] {
			continue
		}
		if e.index >= 0 {
			heap.Remove(&r.queue, e.index)
		}
		delete(r.tables, a)
		r.metrics.forget(a)
	}
}

// scheduleInPolicy queues a table its plan found in policy at the moment
// one of its time-based rules can come due (diff.NextDue); with none, it
// waits unqueued for a change, a new policy or a trigger. A rule that can
// change at any moment (a compaction.where that reads the clock) is due
// every interval, as every table was before. mu is held.
func (r *Reconciler) scheduleInPolicy(e *entry, tp diff.TablePlan) {
	now := r.opts.Now()
	e.status.DueRule = tp.DueRule
	e.reason = ObserveDue + tp.DueRule
	switch {
	case tp.NextDue.IsZero():
		if e.index >= 0 {
			heap.Remove(&r.queue, e.index)
		}
		e.status.NextDue, e.reason = time.Time{}, ""
	case !tp.NextDue.After(now):
		r.schedule(e, now.Add(r.opts.Interval+r.jitter()))
	default:
		r.schedule(e, tp.NextDue.Add(r.jitter()))
	}
}
