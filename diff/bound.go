package diff

import (
	"fmt"

	"github.com/icewright/icewright/config"
)

// boundExpire keeps the approved snapshot ids and refs that the fresh plan
// still expires (docs/design.md §5.3): apply never expires a snapshot the
// approved plan did not list.
func boundExpire(a, f Action) Bounded {
	still := map[int64]bool{}
	for _, id := range f.Expire.SnapshotIDs {
		still[id] = true
	}
	stillRef := map[string]bool{}
	for _, r := range f.Expire.RefsToRemove {
		stillRef[r] = true
	}
	act := a
	e := *a.Expire
	e.SnapshotIDs, e.RefsToRemove = nil, nil
	var notes []string
	for _, id := range a.Expire.SnapshotIDs {
		if still[id] {
			e.SnapshotIDs = append(e.SnapshotIDs, id)
		} else {
			notes = append(notes, fmt.Sprintf("snapshot %d: no longer qualifies for expiry, kept", id))
		}
	}
	for _, ref := range a.Expire.RefsToRemove {
		if stillRef[ref] {
			e.RefsToRemove = append(e.RefsToRemove, ref)
		} else {
			notes = append(notes, fmt.Sprintf("ref %q: no longer qualifies for removal, kept", ref))
		}
	}
	approved := map[int64]bool{}
	for _, id := range a.Expire.SnapshotIDs {
		approved[id] = true
	}
	extra := 0
	for _, id := range f.Expire.SnapshotIDs {
		if !approved[id] {
			extra++
		}
	}
	if extra > 0 {
		notes = append(notes, fmt.Sprintf("%s now %s that the plan did not list; left for the next plan", config.CountOf(extra, "snapshot", "snapshots"), config.Plural(extra, "qualifies", "qualify")))
	}
	act.Expire = &e
	if len(e.SnapshotIDs) == 0 && len(e.RefsToRemove) == 0 {
		return Bounded{Action: act, Skip: "no snapshot the plan listed still qualifies", NotApplied: notes}
	}
	return Bounded{Action: act, NotApplied: notes}
}

// boundOrphans keeps the approved orphan paths that are still orphan
// candidates and the approved quarantine runs still due (docs/design.md
// §5.3): apply never deletes a path the approved plan did not list.
func boundOrphans(a, f Action) Bounded {
	still := map[string]bool{}
	for _, p := range f.Orphans.Paths {
		still[NormalizePath(p, nil, nil)] = true
	}
	act := a
	o := *a.Orphans
	o.Paths = nil
	var notes []string
	for _, p := range a.Orphans.Paths {
		if still[NormalizePath(p, nil, nil)] {
			o.Paths = append(o.Paths, p)
		} else {
			notes = append(notes, p+": no longer an orphan candidate, kept")
		}
	}
	o.Count = len(o.Paths)
	o.PurgeRuns, notes = boundPurgeRuns(a.Orphans.PurgeRuns, f.Orphans.PurgeRuns, notes)
	act.Orphans = &o
	if len(o.Paths) == 0 && len(o.PurgeRuns) == 0 {
		return Bounded{Action: act, Skip: "no path the plan listed is still an orphan and no quarantine run it listed is still due", NotApplied: notes}
	}
	return Bounded{Action: act, NotApplied: notes}
}

// boundPurgeRuns keeps the approved quarantine runs that the fresh plan
// still has due with the very same manifest; a run due only now is left
// for the next plan, which shows it.
func boundPurgeRuns(approved, fresh []PurgeRun, notes []string) ([]PurgeRun, []string) {
	still := map[string]string{}
	for _, r := range fresh {
		still[r.RunID] = r.ManifestDigest
	}
	var out []PurgeRun
	listed := map[string]bool{}
	for _, r := range approved {
		listed[r.RunID] = true
		switch d, ok := still[r.RunID]; {
		case !ok:
			notes = append(notes, "quarantine run "+r.RunID+": no longer due or gone, not purged")
		case d != r.ManifestDigest:
			notes = append(notes, "quarantine run "+r.RunID+": manifest changed since the plan, not purged")
		default:
			out = append(out, r)
		}
	}
	extra := 0
	for _, r := range fresh {
		if !listed[r.RunID] {
			extra++
		}
	}
	if extra > 0 {
		notes = append(notes, fmt.Sprintf("%s %s now due that the plan did not list; left for the next plan", config.CountOf(extra, "quarantine run", "quarantine runs"), config.Plural(extra, "is", "are")))
	}
	return out, notes
}

// boundCompact keeps the approved compaction groups (and engine calls)
// whose partition the fresh plan still compacts the same way, by
// icewright's rewrite or by the same engine: a partition the fresh plan
// refuses, delegates otherwise or no longer compacts is left alone. Files
// that arrived since the plan are in no approved group, so they are not
// touched; the executor then checks each kept group's files against the
// table it commits on (providers/compaction.Resolve) and skips, with the
// reason, a group that no longer matches.
func boundCompact(a, f Action) Bounded {
	type place struct {
		spec      int
		partition string
		engine    string
	}
	still := map[place]bool{}
	for _, g := range f.Compact.Groups {
		still[place{g.SpecID, g.Partition, g.Engine}] = true
	}
	act := a
	c := *a.Compact
	c.Groups, c.EngineCalls = nil, nil
	c.InputFiles, c.InputBytes, c.EstimatedOutputFiles, c.Partitions = 0, 0, 0, 0
	parts := map[place]bool{}
	var notes []string
	for i, g := range a.Compact.Groups {
		at := place{g.SpecID, g.Partition, g.Engine}
		if !still[at] {
			notes = append(notes, fmt.Sprintf("compaction group %d (spec %d, partition %q, %d files): a fresh plan no longer compacts this partition so (the table changed since the plan), left as it is", i+1, g.SpecID, g.Partition, g.InputFiles))
			continue
		}
		c.Groups = append(c.Groups, g)
		c.InputFiles += g.InputFiles
		c.InputBytes += g.InputBytes
		c.EstimatedOutputFiles += g.EstimatedOutputFiles
		if !parts[at] {
			parts[at] = true
			c.Partitions++
		}
	}
	for _, call := range a.Compact.EngineCalls {
		if parts[place{call.SpecID, call.Partition, call.Engine}] {
			c.EngineCalls = append(c.EngineCalls, call)
		}
	}
	act.Compact = &c
	if len(c.Groups) == 0 {
		return Bounded{Action: act, Skip: "no partition the plan compacts is still planned for compaction", NotApplied: notes}
	}
	return Bounded{Action: act, NotApplied: notes}
}
