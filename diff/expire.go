package diff

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Table properties and defaults that iceberg-go's Transaction.ExpireSnapshots
// reads (table/properties.go). The unprefixed legacy keys are its fallbacks.
const (
	propGCEnabled          = "gc.enabled"
	propMaxSnapshotAgeMs   = "history.expire.max-snapshot-age-ms"
	propMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	propMaxRefAgeMs        = "history.expire.max-ref-age-ms"
	legacyMaxSnapshotAgeMs = "max-snapshot-age-ms"
	legacyMinSnapshots     = "min-snapshots-to-keep"
	legacyMaxRefAgeMs      = "max-ref-age-ms"

	defaultMaxSnapshotAgeMs   = int64(5 * 24 * 60 * 60 * 1000)
	defaultMinSnapshotsToKeep = 1
	defaultMaxRefAgeMs        = int64(math.MaxInt64)

	mainBranch = "main"
)

// ExpirySelection is what Iceberg's expiry rules select on one table.
type ExpirySelection struct {
	// Expired are existing snapshot ids, in metadata order.
	Expired []int64
	// RefsToRemove are refs other than main whose head is older than their
	// max ref age, sorted.
	RefsToRemove []string
	// OldestAgeMs is the age of the oldest expired snapshot.
	OldestAgeMs int64
	// OldestTimestampMs is the commit time of the oldest expired snapshot.
	OldestTimestampMs int64
	// Kept counts existing snapshots older than the max age that stay
	// anyway (min_snapshots, ref heads, branch retention).
	Kept int
	// ProtectedByRef counts, per ref other than main (`tag "q3-close"`),
	// old snapshots kept because that ref keeps them and main does not.
	ProtectedByRef map[string]int
	// Problem is set when the metadata is inconsistent (a ref to a missing
	// snapshot); iceberg-go refuses to expire such a table, and so do we.
	Problem string
}

// SelectExpired re-implements iceberg-go v0.7.0's Transaction.ExpireSnapshots
// selection, so a plan lists exactly what apply will remove:
//
//   - a ref other than main whose head is older than its max ref age (the
//     ref's own, else maxRefAge, else the table property) is removed;
//   - every retained ref's head is kept;
//   - each retained branch walks its ancestry, keeping snapshots until one is
//     both older than its max age (ref's own, else maxAge, else property) and
//     at least min snapshots deep (ref's own, else minSnapshots, else property);
//   - snapshots not reachable from any retained branch or tag are kept while
//     younger than maxAge (else the property).
//
// maxAge <= 0 and minSnapshots <= 0 mean "not passed" (WithOlderThan and
// WithRetainLast omitted), so the table properties decide. maxRefAge > 0 is
// the policy's max_ref_age, which update_properties writes to the table
// before expiry runs; zero leaves the table's own property in force.
//
// addedOnMain snapshots are the commits this plan makes on main before it
// expires (compaction, manifest rewrite). They are modelled as young
// snapshots on top of main, so they push older ones out of min_snapshots and
// take over main's head; they are never listed themselves.
func SelectExpired(st *TableState, maxAge time.Duration, minSnapshots int, maxRefAge time.Duration, addedOnMain int, now time.Time) ExpirySelection {
	nowMs := now.UnixMilli()
	lim := retentionOf(st.Properties, maxAge, minSnapshots, maxRefAge)
	byID := make(map[int64]*Snapshot, len(st.Snapshots))
	for i := range st.Snapshots {
		byID[st.Snapshots[i].ID] = &st.Snapshots[i]
	}
	var sel ExpirySelection
	k := retained{keep: map[int64]struct{}{}, keepers: map[int64][]string{}, referenced: map[int64]struct{}{}}
	refs := st.Refs
	if !slices.ContainsFunc(refs, func(r Ref) bool { return r.Name == mainBranch }) && st.CurrentSnapshotID != nil {
		// Metadata without refs (format v1) has main only implicitly, as
		// the current snapshot; iceberg-go synthesises it on read too.
		refs = append(slices.Clone(refs), Ref{Name: mainBranch, Type: "branch", SnapshotID: *st.CurrentSnapshotID})
	}
	for _, ref := range refs {
		if ref.Name == mainBranch && st.CurrentSnapshotID != nil && ref.SnapshotID != *st.CurrentSnapshotID {
			sel.Problem = fmt.Sprintf("branch \"main\" points at snapshot %d but the current snapshot is %d", ref.SnapshotID, *st.CurrentSnapshotID)
			return sel
		}
		head, ok := byID[ref.SnapshotID]
		if !ok {
			sel.Problem = fmt.Sprintf("%s %q points at snapshot %d, which the metadata does not have", refKind(ref), ref.Name, ref.SnapshotID)
			return sel
		}
		refAgeLimit := lim.refAgeMs
		if ref.MaxRefAgeMs != nil {
			refAgeLimit = *ref.MaxRefAgeMs
		}
		if ref.Name != mainBranch && nowMs-head.TimestampMs > refAgeLimit {
			sel.RefsToRemove = append(sel.RefsToRemove, ref.Name)
			continue
		}
		k.keepRef(ref, byID, lim, addedOnMain, nowMs)
	}

	cutoff := nowMs - lim.maxAgeMs
	for _, s := range st.Snapshots {
		if _, ok := k.referenced[s.ID]; ok {
			continue
		}
		if s.TimestampMs >= cutoff {
			k.keep[s.ID] = struct{}{}
		}
	}
	k.selectRest(&sel, st.Snapshots, lim.maxAgeMs, nowMs)
	slices.Sort(sel.RefsToRemove)
	return sel
}

// retention is the limits SelectExpired applies where a ref sets none:
// the arguments passed, else the table's properties.
type retention struct {
	refAgeMs, minKeep, maxAgeMs int64
}

func retentionOf(props map[string]string, maxAge time.Duration, minSnapshots int, maxRefAge time.Duration) retention {
	lim := retention{
		refAgeMs: retentionInt64(props, propMaxRefAgeMs, legacyMaxRefAgeMs, defaultMaxRefAgeMs),
		minKeep:  retentionInt64(props, propMinSnapshotsToKeep, legacyMinSnapshots, defaultMinSnapshotsToKeep),
		maxAgeMs: retentionInt64(props, propMaxSnapshotAgeMs, legacyMaxSnapshotAgeMs, defaultMaxSnapshotAgeMs),
	}
	if maxRefAge > 0 {
		lim.refAgeMs = maxRefAge.Milliseconds()
	}
	if minSnapshots > 0 {
		lim.minKeep = int64(minSnapshots)
	}
	if maxAge > 0 {
		lim.maxAgeMs = maxAge.Milliseconds()
	}
	return lim
}

// retained is what the retained refs keep: the snapshots, the refs that
// keep each (for ProtectedByRef), and every snapshot a retained ref
// reaches.
type retained struct {
	keep       map[int64]struct{}
	keepers    map[int64][]string
	referenced map[int64]struct{}
}

func (k *retained) keepBy(id int64, ref string) {
	k.keep[id] = struct{}{}
	if !slices.Contains(k.keepers[id], ref) {
		k.keepers[id] = append(k.keepers[id], ref)
	}
}

// keepRef keeps what a retained ref keeps: its head, and, for a branch,
// its ancestors until one is both older than its max age and at least its
// min snapshots deep.
func (k *retained) keepRef(ref Ref, byID map[int64]*Snapshot, lim retention, addedOnMain int, nowMs int64) {
	label := refLabel(ref)
	added := 0
	if ref.Name == mainBranch {
		added = max(addedOnMain, 0)
	}
	// After the plan's own commits, main's head is the newest added
	// snapshot, not today's head; only a ref that keeps its head keeps it.
	if added == 0 {
		k.keepBy(ref.SnapshotID, label)
	}
	if ref.Type != "branch" {
		k.referenced[ref.SnapshotID] = struct{}{}
		return
	}
	refMin := lim.minKeep
	if ref.MinSnapshotsToKeep != nil {
		refMin = int64(*ref.MinSnapshotsToKeep)
	}
	refMaxAge := lim.maxAgeMs
	if ref.MaxSnapshotAgeMs != nil {
		refMaxAge = *ref.MaxSnapshotAgeMs
	}
	ancestors := ancestorsOf(ref.SnapshotID, byID)
	for i, s := range ancestors {
		// The added snapshots are age 0 and come first in the walk:
		// they are kept, and shift the existing ones deeper.
		depth := int64(i + added)
		if nowMs-s.TimestampMs > refMaxAge && depth >= refMin {
			break
		}
		k.keepBy(s.ID, label)
	}
	for _, s := range ancestors {
		k.referenced[s.ID] = struct{}{}
	}
}

// selectRest lists every snapshot not kept as expired, and counts the old
// ones kept, by the refs (other than main) that keep them.
func (k *retained) selectRest(sel *ExpirySelection, snapshots []Snapshot, maxAgeMs, nowMs int64) {
	sel.Expired = []int64{}
	for _, s := range snapshots {
		if _, ok := k.keep[s.ID]; !ok {
			sel.Expired = append(sel.Expired, s.ID)
			if sel.OldestTimestampMs == 0 || s.TimestampMs < sel.OldestTimestampMs {
				sel.OldestTimestampMs = s.TimestampMs
			}
			sel.OldestAgeMs = max(sel.OldestAgeMs, nowMs-s.TimestampMs)
			continue
		}
		if nowMs-s.TimestampMs <= maxAgeMs {
			continue
		}
		sel.Kept++
		refs := k.keepers[s.ID]
		if slices.Contains(refs, refLabel(Ref{Name: mainBranch, Type: "branch"})) {
			continue
		}
		for _, r := range refs {
			if sel.ProtectedByRef == nil {
				sel.ProtectedByRef = make(map[string]int)
			}
			sel.ProtectedByRef[r]++
		}
	}
}

// ancestorsOf walks parent pointers from id, newest first, stopping at a
// missing snapshot or a cycle, as iceberg-go's AncestorsOf does.
func ancestorsOf(id int64, byID map[int64]*Snapshot) []*Snapshot {
	var out []*Snapshot
	seen := make(map[int64]struct{})
	for {
		if _, ok := seen[id]; ok {
			return out
		}
		seen[id] = struct{}{}
		s, ok := byID[id]
		if !ok {
			return out
		}
		out = append(out, s)
		if s.ParentID == nil {
			return out
		}
		id = *s.ParentID
	}
}

// retentionInt64 reads a retention property as iceberg-go does: the standard
// key wins when present (an unparsable value gives the default, without
// trying the legacy key); otherwise the legacy key, otherwise the default.
func retentionInt64(props map[string]string, key, legacy string, def int64) int64 {
	if v, ok := props[key]; ok {
		return parseInt64Or(v, def)
	}
	if v, ok := props[legacy]; ok {
		return parseInt64Or(v, def)
	}
	return def
}

func parseInt64Or(v string, def int64) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// gcEnabled mirrors iceberg-go's isGCEnabled: absent means enabled, any value
// other than a case-insensitive "true" means disabled.
func gcEnabled(props map[string]string) bool {
	v, ok := props[propGCEnabled]
	if !ok {
		return true
	}
	return strings.EqualFold(v, "true")
}

func refKind(r Ref) string {
	if r.Type == "tag" {
		return "tag"
	}
	return "branch"
}

// refLabel is how a plan names a ref: `tag "q3-close"`, `branch "main"`.
func refLabel(r Ref) string {
	return fmt.Sprintf("%s %q", refKind(r), r.Name)
}
