package diff

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// PlanTable is the diff: what must happen to one observed table so that it
// satisfies its effective policy at time now. Actions come in docs/design.md §5.1
// order and an action with nothing to do is left out. Destructive actions
// that the safety rules stop become Refusals instead.
func PlanTable(pol *config.Effective, st *TableState, now time.Time) TablePlan {
	tp := TablePlan{
		Address:      st.Address,
		Policy:       pol.PolicyName,
		PolicyDigest: pol.PolicyDigest(),
		Observed: Observed{
			TableUUID:         st.UUID,
			MetadataLocation:  st.MetadataLocation,
			CurrentSnapshotID: st.CurrentSnapshotID,
			DataFiles:         st.Files.DataFiles,
			DataBytes:         st.Files.DataBytes,
			Snapshots:         len(st.Snapshots),
		},
		Actions: []Action{},
	}
	for _, sn := range st.Snapshots {
		if tp.Observed.OldestSnapshotMs == 0 || sn.TimestampMs < tp.Observed.OldestSnapshotMs {
			tp.Observed.OldestSnapshotMs = sn.TimestampMs
		}
	}
	if tp.Address == "" {
		tp.Address = pol.Address
	}
	if pr, ok := pol.Pricing.For(st.Location); ok {
		tp.Pricing = &pr
	}
	tp.References = referenceReads(st)
	in := &planInput{pol: pol, st: st, now: now, props: propsAfter(pol, st)}
	for _, k := range kinds {
		a, refusals, ok := k.plan(in)
		if ok && k.commits != nil {
			// The kinds that add snapshots commit through iceberg-go's
			// snapshot producers.
			if why := HeadIDProblem(st.CurrentSnapshotID); why != "" {
				refusals = append(refusals, Refusal{Action: string(k.Type), Reason: why})
				ok = false
			}
		}
		if ok {
			// Every kind but the orphan sweep (the last) commits a new
			// metadata file; with a commit problem none of them stays.
			in.first = len(tp.Actions) == 0 || st.CommitProblem != ""
			if k.estimate != nil {
				a.Estimate = k.estimate(in, &a)
			}
			tp.Actions = append(tp.Actions, a)
			if a.Compact != nil {
				in.compact = a.Compact
			}
			if k.commits != nil {
				in.addedOnMain += k.commits(&a)
			}
		}
		tp.Refusals = append(tp.Refusals, refusals...)
	}

	// Adjacent actions of one batch share a commit (Kind.Batch): the first
	// one's estimate counts it, the others' only what they add (metadata
	// changes: nothing).
	for i := 1; i < len(tp.Actions); i++ {
		a, prev := &tp.Actions[i], tp.Actions[i-1]
		if b := a.Type.Batch(); b != "" && b == prev.Type.Batch() && a.Estimate != nil {
			a.Estimate = &Usage{}
		}
	}

	if st.CommitProblem != "" {
		// Only the orphan sweep commits nothing; every other action would
		// write its files and then fail to commit.
		kept := tp.Actions[:0]
		for _, a := range tp.Actions {
			if a.Type == RemoveOrphanFiles {
				kept = append(kept, a)
				continue
			}
			tp.Refusals = append(tp.Refusals, Refusal{Action: string(a.Type), Reason: st.CommitProblem})
		}
		tp.Actions = kept
	}

	tp.Warnings = lintTable(pol, st, in.props)
	tp.Warnings = append(tp.Warnings, quarantineWarnings(tp.Address, st.Orphans)...)
	return tp
}

// HeadIDProblem says why no snapshot may be added on a branch whose head is
// snapshot head, or "" when one may. iceberg-go v0.7.0's snapshot producers
// (table/snapshot_producers.go: parentSnapshot, summary, commitManifests)
// take a parent id <= 0 for "no parent": a replace, a manifest rewrite or
// an append built on such a head starts from an empty table and drops every
// live file it was not told to add (issue 32). A negative id is a legal
// long, and writers that think of ids as unsigned 64-bit values write them.
// Commits that add no snapshot (properties, sort order, expiry) are not
// affected. nil (no snapshot) is no problem: there is nothing to drop.
func HeadIDProblem(head *int64) string {
	if head == nil || *head > 0 {
		return ""
	}
	return fmt.Sprintf("main's head is snapshot %d, an id <= 0, which iceberg-go v0.7.0's snapshot producers take for \"no parent\" "+
		"(table/snapshot_producers.go, parentSnapshot): a snapshot built on it would drop every live file it does not rewrite; "+
		"let another engine commit a snapshot on main first (Java and PyIceberg write positive ids), "+
		"or use an icewright built on an iceberg-go release with the fix", *head)
}

// Empty reports whether the table is in policy: nothing to do and nothing
// refused. Warnings do not count.
func (t TablePlan) Empty() bool {
	return len(t.Actions) == 0 && len(t.Refusals) == 0
}

// RetentionArgs are SelectExpired's maxAge and minSnapshots for a
// policy's snapshot_retention. An attribute the policy leaves unset does
// not override the table's own retention property (0: not passed): a
// policy that says nothing changes nothing.
func RetentionArgs(r config.RetentionPolicy) (maxAge time.Duration, minSnapshots int) {
	if r.MaxAge.Set {
		maxAge = r.MaxAge.Value
	}
	if r.MinSnapshots.Set {
		minSnapshots = r.MinSnapshots.Value
	}
	return maxAge, minSnapshots
}

// planExpire selects the snapshots Iceberg's rules expire once the plan's
// own commits are in, so one apply converges (docs/design.md §5.1).
func planExpire(pol *config.Effective, st *TableState, props map[string]string, addedOnMain int, now time.Time) (Action, []Refusal, bool) {
	r := pol.SnapshotRetention
	if !r.Declared {
		return Action{}, nil, false
	}
	if st.CurrentSnapshotID == nil {
		addedOnMain = 0 // nothing to compact; no commits land on main
	}
	maxAge, minSnapshots := RetentionArgs(r)
	probe := *st
	probe.Properties = props
	sel := SelectExpired(&probe, maxAge, minSnapshots, r.MaxRefAge.Value, addedOnMain, now)
	if sel.Problem != "" {
		return Action{}, []Refusal{{Action: string(ExpireSnapshots), Reason: sel.Problem}}, false
	}
	if len(sel.Expired) == 0 && len(sel.RefsToRemove) == 0 {
		return Action{}, nil, false
	}
	// Refused only when there is something to expire: a table kept by
	// gc.enabled=false and in retention is not an error (lint warns).
	if !gcEnabled(props) {
		return Action{}, []Refusal{{
			Action: string(ExpireSnapshots),
			Reason: fmt.Sprintf("gc.enabled is %q: %d snapshots and %d refs are past retention, but expiring them would delete files another table may share",
				props[propGCEnabled], len(sel.Expired), len(sel.RefsToRemove)),
		}}, false
	}
	maxAgeMs := retentionInt64(props, propMaxSnapshotAgeMs, legacyMaxSnapshotAgeMs, defaultMaxSnapshotAgeMs)
	if maxAge > 0 {
		maxAgeMs = maxAge.Milliseconds()
	}
	if minSnapshots <= 0 {
		minSnapshots = int(retentionInt64(props, propMinSnapshotsToKeep, legacyMinSnapshots, defaultMinSnapshotsToKeep))
	}
	maxAgeText := config.FormatDuration(time.Duration(maxAgeMs) * time.Millisecond)
	var reasons []string
	switch _, fromTable := props[propMaxSnapshotAgeMs]; {
	case r.MaxAge.Set:
		reasons = append(reasons, reason("snapshot_retention.max_age", quote(maxAgeText), r.MaxAge.Origin, r.DeclRange))
	case fromTable:
		reasons = append(reasons, fmt.Sprintf("snapshot_retention.max_age unset; table property %s = %s (%s)", propMaxSnapshotAgeMs, props[propMaxSnapshotAgeMs], maxAgeText))
	default:
		reasons = append(reasons, reason("snapshot_retention.max_age", quote(maxAgeText), hcl.Range{}, r.DeclRange))
	}
	if r.MinSnapshots.Set {
		reasons = append(reasons, reason("snapshot_retention.min_snapshots", strconv.Itoa(r.MinSnapshots.Value), r.MinSnapshots.Origin, r.DeclRange))
	}
	if len(sel.RefsToRemove) > 0 && r.MaxRefAge.Set {
		reasons = append(reasons, reason("snapshot_retention.max_ref_age", quote(config.FormatDuration(r.MaxRefAge.Value)), r.MaxRefAge.Origin, r.DeclRange))
	}
	return Action{
		Type:        ExpireSnapshots,
		Destructive: true,
		Reason:      strings.Join(reasons, "; "),
		Expire: &ExpireAction{
			SnapshotIDs:          sel.Expired,
			MaxAge:               maxAgeText,
			MaxAgeMs:             maxAgeMs,
			MinSnapshots:         minSnapshots,
			OldestTimestampMs:    sel.OldestTimestampMs,
			Kept:                 sel.Kept,
			ProtectedByRef:       sel.ProtectedByRef,
			RefsToRemove:         sel.RefsToRemove,
			SnapshotsAddedByPlan: addedOnMain,
		},
	}, nil, true
}

// lintTable finds what docs/design.md §3.6 warns about that only the observed table
// can tell.
func lintTable(pol *config.Effective, st *TableState, props map[string]string) []Warning {
	var out []Warning
	if !gcEnabled(props) && (pol.SnapshotRetention.Declared || pol.OrphanFiles.Declared) {
		block, rng := "snapshot_retention", pol.SnapshotRetention.DeclRange
		if !pol.SnapshotRetention.Declared {
			block, rng = "orphan_files", pol.OrphanFiles.DeclRange
		}
		out = append(out, NewWarning(config.LintGCDisabled,
			fmt.Sprintf("table has gc.enabled=%q but the policy declares %s; icewright will not expire snapshots or remove files of this table", props[propGCEnabled], block),
			fileLine(rng)))
	}
	if c := pol.Compaction; c.Declared && c.Strategy.Value == "sort" && len(pol.SortOrder.Value) == 0 && len(st.SortOrder) == 0 {
		rng := c.Strategy.Origin
		if rng.Filename == "" {
			rng = c.DeclRange
		}
		out = append(out, NewWarning(config.LintSortWithoutOrder,
			"compaction.strategy = \"sort\" but neither the policy nor the table has a sort order; the rewrite cannot sort",
			fileLine(rng)))
	}
	if pr := pol.Pricing; pr.Declared {
		if _, ok := pr.For(st.Location); !ok {
			out = append(out, NewWarning(config.LintPricingPartial,
				fmt.Sprintf("the pricing block leaves %s unset and the table's storage (%s) has no default prices: its plan shows quantities, not money",
					strings.Join(pr.Unset(), ", "), config.StorageOf(st.Location)),
				fileLine(pr.DeclRange)))
		}
	}
	if c := pol.Compaction; c.Declared && c.Where.Value != "" && unpartitioned(st.Specs) {
		out = append(out, NewWarning(config.LintWhereUnpartition,
			fmt.Sprintf("compaction.where = %q restricts nothing on this table: it is not partitioned, and the filter is decided per partition", c.Where.Value),
			fileLine(c.Where.Origin)))
	}
	if o := pol.OrphanFiles; o.Declared {
		if gap := longestCommitGap(st.Snapshots); gap > o.OlderThan.Value.Milliseconds() {
			rng := o.OlderThan.Origin
			if rng.Filename == "" {
				rng = o.DeclRange
			}
			out = append(out, NewWarning(config.LintCommitGap,
				fmt.Sprintf("orphan_files.older_than = %q is shorter than the longest gap between commits on this table (%s): a writer that takes that long to commit could lose its files",
					config.FormatDuration(o.OlderThan.Value), formatAge(gap)),
				fileLine(rng)))
		}
	}
	return out
}

// unpartitioned reports whether no spec of the table has a partition field.
func unpartitioned(specs []PartitionSpec) bool {
	for _, s := range specs {
		if len(s.Fields) > 0 {
			return false
		}
	}
	return true
}

// longestCommitGap is the longest time between a snapshot and its parent.
// Only parent links count: expiry removes snapshots from the middle of the
// history (a tag or min_snapshots keeps an old one, max_age the recent
// ones), and the time between two snapshots that survived it is not a
// time any writer took to commit. Sorting all timestamps made icewright's own
// expiry raise a warning that then stayed.
func longestCommitGap(snaps []Snapshot) int64 {
	ts := make(map[int64]int64, len(snaps))
	for _, s := range snaps {
		ts[s.ID] = s.TimestampMs
	}
	var gap int64
	for _, s := range snaps {
		if s.ParentID == nil {
			continue
		}
		if parent, ok := ts[*s.ParentID]; ok {
			gap = max(gap, s.TimestampMs-parent)
		}
	}
	return gap
}
