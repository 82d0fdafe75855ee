package diff

import "fmt"

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
		notes = append(notes, fmt.Sprintf("%d snapshots now qualify that the plan did not list; left for the next plan", extra))
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
		notes = append(notes, fmt.Sprintf("%d quarantine runs are now due that the plan did not list; left for the next plan", extra))
	}
	return out, notes
}
