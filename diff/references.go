package diff

import "slices"

// Other tables' references (docs/design.md §5.5 rule 6; docs/cost.md):
// the run's first deletion that has something to delete (an expiry that
// releases files, a sweep with candidates or a quarantine purge) reads
// every other table the run can see once (providers/orphans,
// Tables.ReadReferences), and the asker's own table only when a second
// table's deletion asks. That read belongs to the run, not to the action
// that happens to ask first, so the plan counts it once, at the plan level
// (Summary.OtherTablesReferences, in Summary.Estimate), from what each
// table's observation read (TablePlan.References), and apply meters it
// apart (apply.Results.OtherTablesReferences).

// ReferenceReads is what reading one table's references costs (orphans.ReadTable
// with iceberg-go's reader): its metadata file loaded, and every
// snapshot's manifest list and every distinct manifest, as the plan
// observed them (format 2.2, additive).
type ReferenceReads struct {
	MetadataBytes int64 `json:"metadata_bytes"`
	ManifestReads
}

// referenceReads is what the observation of st says reading its
// references costs: the orphan scan's walk of every snapshot when it
// recorded its reads, else every snapshot's list and the current
// manifests (snapshotsWalk's count, list sizes unknown).
func referenceReads(st *TableState) *ReferenceReads {
	r := &ReferenceReads{MetadataBytes: st.MetadataBytes}
	switch {
	case st.Orphans != nil && st.Orphans.Reads != nil:
		r.ManifestReads = *st.Orphans.Reads
	case len(st.Snapshots) > 0:
		r.ManifestReads = ManifestReads{Lists: int64(len(st.Snapshots)), Manifests: int64(st.Manifests.Count), ManifestBytes: st.Manifests.Bytes}
	}
	return r
}

// usage is reading r: a GET for the metadata file and one per list and
// manifest (readsUsage). Its CPU time is not estimated: apply's clock
// gives it to the action that asked (docs/cost.md, Known limits).
func (r ReferenceReads) usage() Usage {
	u := readsUsage(r.ManifestReads)
	u.Requests.Get++
	u.FilesRead++
	u.BytesRead += r.MetadataBytes
	return u
}

// afterCommits is r once the table's planned commits have landed: each
// snapshot a compaction adds brings a manifest list and two manifests
// (snapshotCommit), a manifest rewrite a list and its manifests, each of
// the table's average sizes.
func (r ReferenceReads) afterCommits(actions []Action) ReferenceReads {
	var lists, manifests int64
	for _, a := range actions {
		switch {
		case a.Type == Compact && a.Compact != nil:
			lists += int64(a.Compact.Commits)
			manifests += 2 * int64(a.Compact.Commits)
		case a.Type == RewriteManifests && a.Manifests != nil:
			lists++
			manifests += int64(a.Manifests.EstimatedManifestsAfter)
		}
	}
	if r.Lists > 0 {
		r.ListBytes += lists * r.ListBytes / r.Lists
	}
	if r.Manifests > 0 {
		r.ManifestBytes += manifests * r.ManifestBytes / r.Manifests
	}
	r.Lists += lists
	r.Manifests += manifests
	return r
}

// readsReferences reports whether an action of the plan makes apply read
// the other tables' references: an expiry that releases files, a sweep
// with paths to delete or quarantine runs to purge (providers/expiry
// filesToDelete, providers/orphans Remove).
func readsReferences(a Action) bool {
	switch {
	case a.Type == ExpireSnapshots && a.Expire != nil:
		return a.Expire.FilesToDelete > 0
	case a.Type == RemoveOrphanFiles && a.Orphans != nil:
		// Paths holds the non-Iceberg files it deletes too
		// (include_non_iceberg_files).
		return len(a.Orphans.Paths) > 0 || len(a.Orphans.PurgeRuns) > 0
	}
	return false
}

// OtherTablesReferences is what the plan's run reads of other tables'
// references, table by table (Tables' indexes; none when no deletion
// reads them). Tables are applied in the plan's order (-parallelism=1
// follows it exactly): the first table with a deletion that reads them
// asks first and every other table is read then, those applied before it
// after their planned commits; its own table is read when a later table's
// deletion asks, after its own commits. Tables the plan does not manage
// are not counted.
func OtherTablesReferences(tables []TablePlan) []TableReads {
	asker, readers := -1, 0
	for i, t := range tables {
		if slices.ContainsFunc(t.Actions, readsReferences) {
			if asker < 0 {
				asker = i
			}
			readers++
		}
	}
	if asker < 0 {
		return nil
	}
	var out []TableReads
	for i, t := range tables {
		if t.References == nil || i == asker && readers < 2 {
			continue
		}
		r := *t.References
		if i <= asker {
			r = r.afterCommits(t.Actions)
		}
		out = append(out, TableReads{Table: i, Usage: r.usage()})
	}
	return out
}

// TableReads is one table's part of the run's read of other tables'
// references: its index in the plan's tables and what it costs.
type TableReads struct {
	Table int
	Usage Usage
}
