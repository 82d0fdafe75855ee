package diff

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
)

// Rules NextDue names: the time-based rules that can put a table that did
// not change out of policy.
const (
	// DueRetention: a snapshot or a ref crosses snapshot_retention's ages
	// (max_age, max_ref_age, a ref's own, the table's properties).
	DueRetention = "snapshot_retention"
	// DueOrphanAge: a stray the sweep found passes orphan_files.older_than,
	// or a quarantine run's purge time comes.
	DueOrphanAge = "orphan_files"
	// DueOrphanSweep: orphan_files.every has passed since the sweep.
	DueOrphanSweep = "orphan_sweep"
	// DueAgeing: a partition_ageing window closes (plus after).
	DueAgeing = "partition_ageing"
	// DueWhereClock: compaction.where reads the clock (current_date,
	// current_timestamp, now()): its partitions may change at any time.
	DueWhereClock = "compaction_where"
)

// NextDue is the earliest moment after now at which a plan of the table can
// differ from its plan at now with nothing committed to it, and the rule
// that decides it (one of the Due constants); the zero time when no rule of
// the policy depends on time. st is the table as observed at now.
//
// For the rules that read only the observed state (snapshot ages, ref
// ages, the age of the strays the sweep found, quarantine purge times) the
// answer is the plan's own: PlanTable is run at the moments where one of
// its comparisons can change, and the first moment whose plan of the kind
// differs from the plan at now is the answer (the selections grow with
// time, so a binary search finds it). The rules that need a new
// observation (the next sweep by orphan_files.every, an ageing window that
// closes, a compaction.where that reads the clock) give the moment the
// observation could see something new.
func NextDue(pol *config.Effective, st *TableState, now time.Time) (time.Time, string) {
	var (
		best time.Time
		rule string
	)
	consider := func(t time.Time, r string) {
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best, rule = t, r
		}
	}
	if pol.Compaction.Declared && WhereReadsClock(pol.Compaction.Where.Value) {
		consider(now, DueWhereClock)
	}
	if o := pol.OrphanFiles; o.Declared && o.Every.Value > 0 {
		consider(now.Add(o.Every.Value), DueOrphanSweep)
	}
	if ag := pol.PartitionAgeing; ag.Declared {
		consider(nextWindowStart(ag.To.Value, now.Add(-ag.After.Value)).Add(ag.After.Value), DueAgeing)
	}
	var base *TablePlan // the plan at now, made once
	atNow := func() TablePlan {
		if base == nil {
			tp := PlanTable(pol, st, now)
			base = &tp
		}
		return *base
	}
	if pol.SnapshotRetention.Declared {
		consider(firstChange(pol, st, atNow, now, ExpireSnapshots, retentionMoments(pol, st)), DueRetention)
	}
	if pol.OrphanFiles.Declared && st.Orphans != nil {
		consider(firstChange(pol, st, atNow, now, RemoveOrphanFiles, orphanMoments(pol, st.Orphans)), DueOrphanAge)
	}
	return best, rule
}

// firstChange is the first of moments (milliseconds) after now whose plan
// of kind differs from the plan at now, or the zero time.
func firstChange(pol *config.Effective, st *TableState, atNow func() TablePlan, now time.Time, kind ActionType, moments []int64) time.Time {
	nowMs := now.UnixMilli()
	moments = slices.DeleteFunc(moments, func(m int64) bool { return m <= nowMs })
	if len(moments) == 0 {
		return time.Time{}
	}
	slices.Sort(moments)
	moments = slices.Compact(moments)
	at := atNow()
	differs := func(ms int64) bool { return !sameKind(at, PlanTable(pol, st, time.UnixMilli(ms)), kind) }
	i, _ := slices.BinarySearchFunc(moments, true, func(m int64, _ bool) int {
		if differs(m) {
			return 1
		}
		return -1
	})
	if i == len(moments) {
		return time.Time{}
	}
	return time.UnixMilli(moments[i])
}

// sameKind reports whether two plans of one table have the same actions
// and refusals of kind.
func sameKind(a, b TablePlan, kind ActionType) bool {
	pick := func(tp TablePlan) ([]Action, []Refusal) {
		var as []Action
		for _, x := range tp.Actions {
			if x.Type == kind {
				as = append(as, x)
			}
		}
		var rs []Refusal
		for _, r := range tp.Refusals {
			if r.Action == string(kind) {
				rs = append(rs, r)
			}
		}
		return as, rs
	}
	aa, ar := pick(a)
	ba, br := pick(b)
	return reflect.DeepEqual(aa, ba) && reflect.DeepEqual(ar, br)
}

// retentionMoments are the moments at which one of expiry's age
// comparisons can change: each snapshot's commit time plus each age the
// rules may use (the policy's, the table's properties before and after the
// plan's update_properties, the defaults, each ref's own), and a
// millisecond after.
func retentionMoments(pol *config.Effective, st *TableState) []int64 {
	r := pol.SnapshotRetention
	ages := []int64{defaultMaxSnapshotAgeMs}
	if r.MaxAge.Set {
		ages = append(ages, r.MaxAge.Value.Milliseconds())
	}
	if r.MaxRefAge.Value > 0 {
		ages = append(ages, r.MaxRefAge.Value.Milliseconds())
	}
	for _, props := range []map[string]string{st.Properties, propsAfter(pol, st)} {
		for _, k := range [][2]string{{propMaxSnapshotAgeMs, legacyMaxSnapshotAgeMs}, {propMaxRefAgeMs, legacyMaxRefAgeMs}} {
			if v := retentionInt64(props, k[0], k[1], -1); v >= 0 {
				ages = append(ages, v)
			}
		}
	}
	for _, ref := range st.Refs {
		if ref.MaxSnapshotAgeMs != nil {
			ages = append(ages, *ref.MaxSnapshotAgeMs)
		}
		if ref.MaxRefAgeMs != nil {
			ages = append(ages, *ref.MaxRefAgeMs)
		}
	}
	slices.Sort(ages)
	ages = slices.Compact(ages)
	out := make([]int64, 0, 2*len(ages)*len(st.Snapshots))
	for _, s := range st.Snapshots {
		for _, a := range ages {
			out = append(out, addMs(s.TimestampMs, a), addMs(s.TimestampMs, a)+1)
		}
	}
	return out
}

// orphanMoments are the moments at which the sweep's age guard or a
// quarantine run's purge time can change the plan of the same scan.
func orphanMoments(pol *config.Effective, scan *OrphanScan) []int64 {
	older := pol.OrphanFiles.OlderThan.Value.Milliseconds()
	var out []int64
	for _, fs := range [][]FileInfo{scan.Candidates, scan.NonIceberg} {
		for _, f := range fs {
			out = append(out, addMs(f.MtimeMs, older), addMs(f.MtimeMs, older)+1)
		}
	}
	for _, q := range scan.Quarantine {
		if q.PurgeAfterMs > 0 {
			out = append(out, q.PurgeAfterMs, q.PurgeAfterMs+1)
		}
	}
	return out
}

// addMs adds without overflowing (an age of "forever" is MaxInt64).
func addMs(t, d int64) int64 {
	if d > 0 && t > 0 && t > (1<<62)-d {
		return 1 << 62
	}
	return t + d
}

// nextWindowStart is the start of the window of grain (hour, day, month,
// year, UTC) after the one holding t: partition ageing ages the windows
// before the one holding now - after (providers/internal/reach.WindowValue),
// so that set grows when now - after reaches this.
func nextWindowStart(grain string, t time.Time) time.Time {
	t = t.UTC()
	switch grain {
	case "hour":
		return t.Truncate(time.Hour).Add(time.Hour)
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
	case "month":
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	case "year":
		return time.Date(t.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

// clockWords are the words of compaction.where's language that read the
// clock (providers/compaction.ParseWhere; a test there holds the two
// together).
var clockWords = []string{"current_date", "current_timestamp", "now"}

// WhereReadsClock reports whether a compaction.where text reads the clock:
// one of clockWords as a bare word outside quotes.
func WhereReadsClock(where string) bool {
	word := func(r rune) bool {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	var b strings.Builder
	quote := rune(0)
	for _, r := range where + " " {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			continue
		case r == '\'' || r == '"':
			quote = r
		case word(r):
			b.WriteRune(r)
			continue
		}
		if slices.Contains(clockWords, strings.ToLower(b.String())) {
			return true
		}
		b.Reset()
	}
	return false
}
